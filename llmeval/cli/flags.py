"""Options built from flags: each options model checks its own values (pydantic `Field` bounds);
a value one refuses becomes one line naming its flag (`--n-samples must be at least 1, got 0`).
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from llmeval.errors import UsageError

M = TypeVar("M", bound=BaseModel)
# a Field's bounds (annotated_types' Gt, Ge, Lt, Le in its metadata) in words
_BOUNDS = {
    "gt": "more than {:g}",
    "ge": "at least {:g}",
    "lt": "less than {:g}",
    "le": "at most {:g}",
}


def from_flags(
    model: type[M],
    /,
    flag_prefix: str = "",
    flag_names: dict[str, str] | None = None,
    **values: Any,
) -> M:
    """`model(**values)`, or a `UsageError` naming the flag of the first value it refuses (a
    field's flag is its `flag_names` entry, else `flag_prefix` and its name with dashes:
    `n_samples` is `--n-samples`)."""
    try:
        return model(**values)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        name = str(error["loc"][0])
        flag = (flag_names or {}).get(name) or "--" + (flag_prefix + name).replace("_", "-")
        field = model.model_fields.get(name)
        bounds = _bounds(field.metadata, field.json_schema_extra) if field else ""
        if bounds and error["type"] in ("greater_than", "greater_than_equal", "less_than",
                                        "less_than_equal", "finite_number"):  # fmt: skip
            raise UsageError(f"{flag} must be {bounds}, got {error['input']!r}") from None
        got = f", got {error['input']!r}" if error["type"] != "value_error" else ""
        raise UsageError(f"{flag} {error['msg'].removeprefix('Value error, ')}{got}") from None


def _bounds(metadata: list[Any], extra: Any) -> str:
    """A field's range in words: `positive and at most 86400 s` (`unit` from its extra)."""
    unit = f" {extra['unit']}" if isinstance(extra, dict) and "unit" in extra else ""
    said = []
    for bound in metadata:
        kind = type(bound).__name__.lower()
        if kind in _BOUNDS:
            limit = getattr(bound, kind)
            said.append("positive" if kind == "gt" and limit == 0 else _BOUNDS[kind].format(limit))
        elif kind == "allowinfnan" and not bound.allow_inf_nan:
            said.append("finite")
    return " and ".join(said) + (unit if said else "")
