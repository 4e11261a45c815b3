"""Processes seen through /proc, for tests that check what a run leaves behind (Linux)."""

from __future__ import annotations

import os
from pathlib import Path


def session_members(sid: int) -> list[int]:
    """Live (not zombie) processes of session `sid`."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            if os.getsid(int(entry.name)) == sid and state != "Z":
                members.append(int(entry.name))
        except (OSError, IndexError):
            continue
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
