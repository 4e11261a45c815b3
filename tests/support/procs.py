"""Processes seen through /proc, for tests that check what a run leaves behind (Linux)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path


def _live() -> Iterator[tuple[int, int]]:
    """(pid, parent pid) of every live (not zombie) process."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state, ppid = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
        except (OSError, ValueError):
            continue
        if state != "Z":
            yield int(entry.name), int(ppid)


def session_members(sid: int) -> list[int]:
    """Live (not zombie) processes of session `sid`."""
    members = []
    for pid, _ in _live():
        with contextlib.suppress(OSError):
            if os.getsid(pid) == sid:
                members.append(pid)
    return members


def children_status(pid: int) -> dict[str, str]:
    """{command line: /proc status text} of the live children of `pid`."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError):
            continue
        if f"\nPPid:\t{pid}\n" in status:
            found[cmdline] = status
    return found


def blocked_signals(status: str) -> int:
    """The mask of blocked signals (`SigBlk`) in a /proc status text."""
    return int(next(ln.split()[1] for ln in status.splitlines() if ln.startswith("SigBlk")), 16)


def children(pid: int) -> list[int]:
    """Live (not zombie) children of `pid`."""
    return [child for child, parent in _live() if parent == pid]


def verifier_workers() -> list[int]:
    """The verifier workers of this process: the children of its forkserver."""
    servers = [c for c in children(os.getpid()) if b"forkserver" in _cmdline(c)]
    return [w for server in servers for w in children(server)]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
