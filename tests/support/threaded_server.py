"""The loopback test server (`openai_server.OpenAIServer`) on its own event loop in a daemon
thread, for tests and stress runs in one process: `with serve(...) as srv: ... srv.url ...`."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from tests.support.openai_server import OpenAIServer, ServerConfig


class ThreadedServer:
    """An `OpenAIServer` running on its own event loop in a daemon thread."""

    def __init__(self, config: ServerConfig | None = None, **options: Any) -> None:
        self.server = OpenAIServer(config or ServerConfig(**options))
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="openai-server")

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self.server.start())
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self.server.stop())
        pending = asyncio.all_tasks(self._loop)  # connections still open: end them quietly
        for task in pending:
            task.cancel()
        self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self._loop.close()

    def start(self) -> ThreadedServer:
        """Start and wait until it listens."""
        self._thread.start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        """Stop the loop and join the thread."""
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    @property
    def url(self) -> str:
        """Base URL ending in /v1."""
        return self.server.url

    @property
    def stats(self) -> collections.Counter[str]:
        """Request and fault counters."""
        return self.server.stats


@contextlib.contextmanager
def serve(config: ServerConfig | None = None, **options: Any) -> Iterator[ThreadedServer]:
    """`with serve(faults={"429": 0.2}) as srv: ... srv.url ...`: a server for one block."""
    handle = ThreadedServer(config, **options).start()
    try:
        yield handle
    finally:
        handle.stop()
