"""Folders that refuse writes, for failure tests: read-only, or a disk that fills up.

As root (where `chmod` does not stop writes) these are small tmpfs mounts; otherwise a
read-only folder is `chmod 555` and a full disk is left to `RLIMIT_FSIZE` by the caller.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


class Mounts:
    """tmpfs mounts made for one test run; `close()` unmounts them all."""

    def __init__(self) -> None:
        self.points: list[Path] = []
        self.chmodded: list[Path] = []
        self.frozen: list[Path] = []

    def tmpfs(self, path: Path, size: int) -> bool:
        """Mount a tmpfs of `size` bytes on `path` (created); False when not possible."""
        path.mkdir(parents=True, exist_ok=True)
        if os.geteuid() != 0:
            return False
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
            capture_output=True,
        )
        if done.returncode != 0:
            return False
        self.points.append(path)
        return True

    def make_read_only(self, path: Path) -> bool:
        """Stop writes into `path`: remount its tmpfs read-only, or chmod 555 when not root."""
        if path in self.points:
            done = subprocess.run(["mount", "-o", "remount,ro", str(path)], capture_output=True)
            return done.returncode == 0
        if os.geteuid() == 0:
            return False
        path.chmod(0o555)
        self.chmodded.append(path)
        return True

    def freeze(self, path: Path) -> None:
        """Make a file refuse writes as another user's would: immutable (`chattr +i`, which stops
        root too), else read-only (`chmod 444`, when not root)."""
        if os.geteuid() == 0:
            subprocess.run(["chattr", "+i", str(path)], check=True, capture_output=True)
        else:
            path.chmod(0o444)
        self.frozen.append(path)

    def close(self) -> None:
        """Undo every mount, chmod and chattr."""
        for path in self.frozen:
            if os.geteuid() == 0:
                subprocess.run(["chattr", "-i", str(path)], capture_output=True)
        for path in reversed(self.points):
            subprocess.run(["umount", "-l", str(path)], capture_output=True)
        for path in self.chmodded:
            path.chmod(0o755)
        self.points.clear()
        self.chmodded.clear()
        self.frozen.clear()

    def __enter__(self) -> Mounts:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
