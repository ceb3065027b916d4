"""`make demo`: package the default bundle, render the package with real helm, say what it holds.

The archive is what `gpu-platform package` publishes: the chart with its four dependencies
inside. Where the real chart repositories are out of reach (as on the project's offline build
machines) it holds the real Dask operator chart and clearly named stand-ins for the other
three, and says so.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from gpu_platform import helm
from gpu_platform.pipeline.run import check_defaults
from gpu_platform.publish import dependencies, package
from gpu_platform.summary import summary


def log(message: str) -> None:
    print(message, file=sys.stderr)


def main() -> int:
    checked = check_defaults()
    with tempfile.TemporaryDirectory(prefix="gpu-platform-demo-") as tmp:
        built = package.build(checked, Path(tmp), log=log, allow_standins=True)
        manifests = helm.template(built.archive, [], env=dependencies.helm_env())
    print(
        f"Package: {built.archive.name}"
        + (
            f" (STAND-INS for {', '.join(built.standins)}: their repositories were out of reach)"
            if built.standins
            else " (the real charts)"
        )
    )
    print(summary(checked, manifests), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
