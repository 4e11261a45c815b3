"""How every sample is asked for: one frozen model shared by infer's options, the run spec
(which extends it) and the request body; its range checks are the flags' checks."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

# Request fields llmeval sets itself besides the sampling parameters, and the flag that sets
# each: never taken from --extra-body (`{"seed": 1}` there made every sample of a problem
# alike while the rows recorded their own seeds).
OWN_FIELDS = {
    "model": "--model",
    "messages": "--prompt-template or --system-prompt",
    "n": "--n-samples (each sample is its own request)",
    "seed": "--seed",
    "max_completion_tokens": "--max-tokens",
    "stream": "--stream or --no-stream",
    "stream_options": "--stream or --no-stream",
    "thinking_token_budget": "--thinking-budget",
}


class Sampling(BaseModel):
    """The sampling parameters, template and system prompt of a run (`seed` is the base seed:
    each sample's own is derived from it)."""

    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    temperature: float = Field(0.6, ge=0)
    top_p: float = Field(0.95, gt=0, le=1)
    top_k: int | None = None
    min_p: float | None = Field(None, ge=0, le=1)
    max_tokens: int = Field(32768, ge=1)
    seed: int = 0
    system_prompt: str | None = None
    prompt_template: str = ""
    extra_body: dict[str, Any] = Field(default_factory=dict)
    # settings that move reasoning scores by tens of points: the OpenAI `reasoning_effort`
    # ("low", "medium", "high", or what the server accepts) and vLLM's thinking budget,
    # sent as `thinking_token_budget`
    reasoning_effort: str | None = Field(None, min_length=1, max_length=64, pattern=r"^[\w.-]+$")
    thinking_budget: int | None = Field(None, ge=1)

    # the fields sent as request parameters of the same name (those that are not None)
    PARAMS: ClassVar[tuple[str, ...]] = (
        "max_tokens",
        "temperature",
        "top_p",
        "top_k",
        "min_p",
        "reasoning_effort",
    )

    @field_validator("extra_body")
    @classmethod
    def _not_own_fields(cls, extra: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        own = cls.own_fields_in(extra)
        if own and not (info.context or {}).get("stored"):  # an old run's spec is read
            flag = OWN_FIELDS.get(own[0], "--" + own[0].replace("_", "-"))
            raise ValueError(f"may not set {own[0]!r}: llmeval sets it; use {flag}")
        return extra

    @classmethod
    def own_fields_in(cls, extra: dict[str, Any]) -> list[str]:
        """The request fields llmeval sets itself that `extra` would replace."""
        return sorted(extra.keys() & {*OWN_FIELDS, *cls.PARAMS})
