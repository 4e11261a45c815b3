"""Results of calls kept beside the run (`<output>.tools.jsonl`, append-only, one line per
call), keyed by the hash of (code, state, sandbox spec): a resumed or repeated sample sees
byte-identical outputs without running anything again."""

from __future__ import annotations

from pathlib import Path

from llmeval.jsonl import JsonlAppender, read_dicts
from llmeval.runs.layout import TOOLS_SUFFIX
from llmeval.transcripts import ToolCall


def cache_path(output: str | Path) -> Path:
    """The cache beside the file a run writes."""
    return Path(f"{output}{TOOLS_SUFFIX}")


class ResultCache:
    """{key: call} read once, appended to as calls finish (a whole line per write, under the
    appenders' lock: shards of one run may share it)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.results: dict[str, ToolCall] = {}
        if self.path.exists():
            for _, row in read_dicts(self.path):
                key = row.pop("key", None)
                if isinstance(key, str):
                    self.results[key] = ToolCall.model_validate(row)
        self._appender: JsonlAppender | None = None

    def get(self, key: str) -> ToolCall | None:
        """The call's result, if it ran before."""
        return self.results.get(key)

    def put(self, key: str, call: ToolCall) -> None:
        """Keep a result (the first of a key wins: a repeat is never written twice)."""
        if key in self.results:
            return
        self.results[key] = call
        if self._appender is None:
            self._appender = JsonlAppender(self.path)
        line = call.model_dump_json(exclude={"call_id"}, exclude_none=True)
        self._appender.write_raw(b'{"key": "' + key.encode() + b'", ' + line[1:].encode() + b"\n")

    def close(self) -> None:
        """Close the file."""
        if self._appender is not None:
            self._appender.close()
            self._appender = None
