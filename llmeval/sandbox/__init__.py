"""The only place model-written code runs: each call in a fresh, limited, isolated process
(never in llmeval's), at most one per core at once, its result cached by the hash of
(code, state, sandbox spec). Stage-neutral: it imports only llmeval's bottom-level modules."""

from __future__ import annotations

import asyncio
import collections
import hashlib
import json
import marshal
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from llmeval.records import cache_key
from llmeval.sandbox.cache import ResultCache
from llmeval.sandbox.call import Outcome, Started, finish, start
from llmeval.sandbox.launch import FILE_MB, PROCESSES, RUNNER, Launcher, start_line
from llmeval.transcripts import SandboxInfo, ToolCall, ToolSettings

__all__ = ["Sandbox", "start_line"]


class Sandbox:
    """Runs calls: `await sandbox.run(code, setup)`; `prewarm` keeps that many processes
    started ahead (each still runs one call only)."""

    def __init__(
        self, settings: ToolSettings, cache: str | Path | None = None, prewarm: int = 0
    ) -> None:
        self.launcher = Launcher(settings)
        try:
            self.launcher.probe()
        except OSError:
            self.launcher.close()
            raise
        self.settings = settings
        self.cache = ResultCache(cache) if cache else None
        self.prewarm = prewarm
        self.slots = asyncio.Semaphore(os.cpu_count() or 1)  # calls running at once
        self.hits = self.runs = 0
        self._spares: collections.deque[Started] = collections.deque()
        self._lock = threading.Lock()
        # every process is started from this one thread: bwrap's --die-with-parent ends a
        # sandbox when the thread that started it ends (a worker thread retired early)
        self._spawner = ThreadPoolExecutor(1, thread_name_prefix="llmeval-sandbox")
        self.spec = self._spec()

    @property
    def info(self) -> SandboxInfo:
        """Where calls run (the run spec records it)."""
        return self.launcher.info()

    def _spec(self) -> str:
        """The digest of everything besides the code that shapes a call's output."""
        parts = {
            "info": self.info.model_dump(),
            "settings": self.settings.model_dump(include={"timeout_s", "memory_mb",
                                                          "output_chars", "sandbox_cmd"}),
            "limits": [PROCESSES, FILE_MB],
            "runner": hashlib.sha256(RUNNER.encode()).hexdigest(),
        }  # fmt: skip
        return json.dumps(parts, sort_keys=True)

    def key(self, code: str, setup: list[str]) -> str:
        """The cache key of a call: its code, the blocks replayed before it, the spec."""
        return cache_key(code, json.dumps(setup), self.spec)

    async def run(self, code: str, setup: list[str] | None = None) -> ToolCall:
        """Run `code` (after `setup`, each block's output discarded) in a fresh process, or
        give the result it had before."""
        setup = setup or []
        key = self.key(code, setup)
        if self.cache and (hit := self.cache.get(key)):
            self.hits += 1
            return hit.model_copy(update={"code": code})
        payload = marshal.dumps((code, tuple(setup)))
        async with self.slots:
            outcome = await asyncio.to_thread(self._call, payload)
        self.runs += 1
        call = ToolCall(code=code, stdout=outcome.stdout, stderr=outcome.stderr,
                        status=outcome.status, cpu_s=outcome.cpu_s)  # fmt: skip
        if self.cache:
            self.cache.put(key, call)
        return call

    def _call(self, payload: bytes) -> Outcome:
        with self._lock:
            started = self._spares.popleft() if self._spares else None
        started = started or self._start()
        try:
            return finish(self.launcher, started, payload)
        finally:
            self._refill()

    def _refill(self) -> None:
        """Start processes ahead until `prewarm` wait (they wait for code, using no CPU)."""
        while True:
            with self._lock:
                if len(self._spares) >= self.prewarm:
                    return
            spare = self._start()
            with self._lock:
                self._spares.append(spare)

    def _start(self) -> Started:
        """A process started (from the spawning thread), waiting for its code."""
        return self._spawner.submit(start, self.launcher).result()

    def warm(self) -> None:
        """Start the prewarmed processes now (before the first call)."""
        self._refill()

    def close(self) -> None:
        """Stop the spare processes, close the cache, remove the links folder."""
        with self._lock:
            spares, self._spares = list(self._spares), collections.deque()
        for spare in spares:
            finish(self.launcher, spare, b"")  # ends at once: no code
        self._spawner.shutdown()
        if self.cache:
            self.cache.close()
        self.launcher.close()
