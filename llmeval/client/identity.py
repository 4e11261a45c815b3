"""What a server says about itself, kept as short printable strings and never trusted further:
the model it serves (and vLLM's `root`, the weights behind a served name), its `/version`
(vLLM) and the `system_fingerprint` of its responses."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from llmeval.terminal import printable

MAX_TEXT = 120  # characters kept of any one string
VERSION_BYTES = 4096  # a longer /version answer is not a version


def short_text(value: Any) -> str | None:
    """A string or number from a server as at most MAX_TEXT characters on one line (control,
    format and surrogate characters become spaces); None for anything else or nothing."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    text = str(value)[: 4 * MAX_TEXT]
    text = " ".join(printable(text).split())
    if len(text) > MAX_TEXT:
        text = text[: MAX_TEXT - 3] + "..."
    return text or None


def served_model(listing: Any, model: str) -> tuple[str | None, str | None]:
    """The `id` and `root` of the `/v1/models` entry named `model`, else of the only entry."""
    entries = [e for e in listing if isinstance(e, dict)] if isinstance(listing, list) else []
    found = [e for e in entries if e.get("id") == model] or entries
    if len(found) != 1:
        return None, None
    return short_text(found[0].get("id")), short_text(found[0].get("root"))


async def server_version(http: httpx.AsyncClient, base_url: str, wait: float = 10.0) -> str | None:
    """vLLM's `GET /version` (`{"version": "0.11.0"}`) at the root of `base_url` (`.../v1`);
    None for anything else: a 404, not JSON, over VERSION_BYTES, no answer within `wait` s."""
    body = b""
    try:
        async with asyncio.timeout(wait):
            async with http.stream("GET", base_url.removesuffix("/v1") + "/version") as resp:
                if resp.status_code != 200:
                    return None
                async for chunk in resp.aiter_bytes():
                    body += chunk
                    if len(body) > VERSION_BYTES:
                        return None
        data = json.loads(body)
    except Exception:  # an optional probe of a server: any failure means "absent"
        return None
    return short_text(data.get("version")) if isinstance(data, dict) else None
