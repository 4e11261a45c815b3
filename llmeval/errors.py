"""Typed errors: the core raises these, `cli.main` turns each into one line and an exit code."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

# Exit codes of the command line.
EXIT_OK = 0
EXIT_USAGE = 2  # bad flags, bad input file, refused resume
EXIT_INCOMPLETE = 3  # some samples failed: rerun to resume
EXIT_SERVER = 4  # server unreachable, refused, or rejected the request
EXIT_OUTPUT = 5  # cannot write the output (read-only folder, disk full)
EXIT_PARTIAL = 6  # eval --require-complete: a run is incomplete (table and outputs written)
EXIT_INTERRUPTED = 130


class LlmevalError(Exception):
    """An error with a one-line message for the user and an exit code."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(LlmevalError):
    """Flags that do not fit together, or a refused resume."""


class InputError(LlmevalError):
    """A bad input or output file; the message names the file and, where known, the line."""

    def __init__(self, path: str | Path, message: str, *, line: int | None = None) -> None:
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {message}")


class ServerError(LlmevalError):
    """The inference server cannot be used (unreachable, refused, wrong model)."""

    exit_code = EXIT_SERVER


class OutputError(LlmevalError):
    """An output cannot be written; what was already written is untouched."""

    exit_code = EXIT_OUTPUT


class PartialError(LlmevalError):
    """`eval --require-complete` met an incomplete run: its figures are shown, not final."""

    exit_code = EXIT_PARTIAL


_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)\S*@")
# A bearer token as a server may quote its Authorization header back (`Bearer sk-...`).
_BEARER = re.compile(r"(?i)\b(bearer)(\s+|%20)[^\s\"',;]+")
MIN_SECRET = 6  # a shorter key is hidden only after `Bearer`: replacing it anywhere mangles text
_SECRETS: set[str] = set()


def display_url(url: str) -> str:
    """A URL without credentials, query or fragment, for messages, logs and the run spec;
    never raises (a URL that cannot be split has everything up to its last `@` dropped)."""
    try:
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
        shown = urlunsplit((parts.scheme, host, parts.path, "", ""))
    except ValueError:
        shown = url.split("?", 1)[0].split("#", 1)[0]
    # a '/' in a password ends the host for urlsplit: the rest still holds an '@'
    return redact(shown)


def hide_secret(secret: str | None) -> None:
    """From now on `redact` writes `secret` (an API key this process sends) as `***`, wherever
    it appears: a gateway may quote it back in an error."""
    if secret and len(secret.strip()) >= MIN_SECRET:
        _SECRETS.add(secret.strip())


def redact(text: str) -> str:
    """`text` with the `user:password@` of every URL in it written `***@`, every bearer token
    and every key `hide_secret` was given written `***`: the last filter of every message."""
    text = _BEARER.sub(r"\1\2***", _USERINFO.sub(r"\1***@", text))
    for secret in sorted(_SECRETS, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text
