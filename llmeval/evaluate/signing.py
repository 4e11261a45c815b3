"""Verdicts llmeval wrote on this machine: a secret key of this user (made on first use, mode
0600, in the user's config folder) and each cached verdict's seal, a MAC under it (keyed
BLAKE2b). A cache shipped with someone else's results, or forged, bears no seal that verifies:
its verdicts may be used, but are counted and named (anyone can compute the keys)."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import operator
import os
import stat
import tempfile
from functools import lru_cache
from pathlib import Path

from llmeval.records import Verdict

log = logging.getLogger("llmeval")
KEY_BYTES = 32
_FIELDS = operator.attrgetter(*Verdict.model_fields)  # every field, as a tuple


def key_path() -> Path:
    """Where this user's key lives: `$XDG_CONFIG_HOME/llmeval/verdict-key`, else under
    `~/.config` (a home shared by a cluster's nodes shares it: their caches are ours)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "llmeval" / "verdict-key"


@lru_cache(maxsize=1)
def machine_key() -> bytes | None:
    """This user's secret key, made on first use; None (said once) when it can neither be read
    nor made, or cannot be trusted: not a regular file of this user's, or readable by others."""
    path = key_path()
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as exc:
        _no_key(path, str(exc))
        return None
    try:
        return _make_key(path)
    except (OSError, ValueError) as exc:
        _no_key(path, getattr(exc, "strerror", None) or str(exc))
        return None


def _read_key(path: Path) -> bytes:
    """The key in `path`, which must be this user's regular file, closed to everyone else."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with open(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            raise ValueError("not a regular file of this user's")
        if info.st_mode & 0o077:
            raise ValueError(f"others may read it (mode {info.st_mode & 0o777:o}): chmod 600 it")
        key = bytes.fromhex(handle.read(4 * KEY_BYTES).decode("ascii", "replace").strip())
    if len(key) != KEY_BYTES:
        raise ValueError(f"not {KEY_BYTES} bytes written in hex")
    return key


def _make_key(path: Path) -> bytes:
    """A new random key in `path`, created whole (a temporary file linked to the name): an
    eval making it at the same moment reads the one that won."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".verdict-key.", dir=path.parent)  # (mode 0600)
    try:
        with open(fd, "wb") as handle:
            handle.write(os.urandom(KEY_BYTES).hex().encode() + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        os.unlink(tmp)
    return _read_key(path)


def _no_key(path: Path, why: str) -> None:
    log.warning(
        "no verdict key at %s (%s): the verdicts this eval caches cannot be told from ones "
        "someone else wrote, and cached ones are counted as such",
        path,
        why,
    )


def seal(verdict: Verdict) -> str | None:
    """The seal of `verdict` under this user's key: a keyed BLAKE2b (a MAC) of the `repr` of
    all its fields (None and 'None' differ), 128 bits in hex; None without a key."""
    key = machine_key()
    if key is None:
        return None
    message = repr(_FIELDS(verdict)).encode("utf-8", "backslashreplace")
    return hashlib.blake2b(message, key=key, digest_size=16).hexdigest()


def sealed_here(verdict: Verdict, mark: str | None) -> bool:
    """Whether `mark` is `verdict`'s seal under this user's key (llmeval wrote it here)."""
    expected = seal(verdict) if mark else None
    return expected is not None and hmac.compare_digest(expected, mark or "")
