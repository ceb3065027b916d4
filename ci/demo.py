"""`make demo`: render the default bundle, build it with real helm, print what it contains.

Uses the real chart repositories when this machine can reach them; otherwise (as on the
project's offline build machines) it serves the real Dask operator chart and clearly named
stand-ins for the other three from 127.0.0.1, exactly as the render tests do.
"""

from __future__ import annotations

import shutil
import socket
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from gpu_platform import helm, tools  # noqa: E402
from gpu_platform.cli import _summary  # noqa: E402
from gpu_platform.pipeline.rules import check_defaults  # noqa: E402


def real_repositories_reachable() -> bool:
    try:
        socket.create_connection(("helm.ngc.nvidia.com", 443), timeout=3).close()
        socket.create_connection(("prometheus-community.github.io", 443), timeout=3).close()
        return True
    except OSError:
        return False


def main() -> int:
    from support.chartrepo import LocalChartRepo
    from support.standins import build_standins, dask_chart, package_all

    real = real_repositories_reachable()
    with tempfile.TemporaryDirectory(prefix="gpu-platform-demo-") as tmp:
        work = Path(tmp)
        chart = work / "gpu-platform"
        shutil.copytree(REPO / "charts" / "gpu-platform", chart,
                        ignore=shutil.ignore_patterns("charts"))
        if real:
            print("Using the real chart repositories.", file=sys.stderr)
            repo = LocalChartRepo(real_repos=True)
        else:
            print("The real chart repositories are out of reach: using the real Dask operator "
                  "chart and STAND-INS for gpu-operator, kube-prometheus-stack and "
                  "prometheus-adapter (their real default values and CRDs; one ConfigMap each).",
                  file=sys.stderr)
            built = build_standins(work / "upstream")
            built["dask-kubernetes-operator"] = dask_chart(work / "upstream" / "dask")
            repo = LocalChartRepo(package_all(built, work / "packages", tools.locate("helm3")))
        with repo:
            repo.dependency_build(chart, helm.binary(3))
            manifests = helm.template(chart, [], env=repo.env())
    print(_summary(check_defaults(), manifests), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
