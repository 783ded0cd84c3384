"""Adapter registry: the only way the engine reaches a concrete adapter.

Modules are imported lazily so that, for example, a run with API judges
never imports vLLM.
"""

from __future__ import annotations

import importlib

from engine.contracts import Adapter, AdapterConfigError, JudgeSpec

# adapter name -> "module:factory"; factory(spec: JudgeSpec) -> Adapter
ADAPTER_FACTORIES: dict[str, str] = {
    "openai": "adapters.openai:create",
    "openai-compatible": "adapters.openai:create_compatible",
    "azure": "adapters.openai:create_azure",
    "anthropic": "adapters.anthropic:create",
    "gemini": "adapters.gemini:create",
    "vllm": "adapters.vllm:create",
    "baseline": "adapters.baseline:create",
}


def accepts_guided_regex(spec: JudgeSpec) -> bool:
    """Whether the judge's backend honours `Decoding.guided_regex`.

    Score prompts carry a regex for backends that can constrain decoding
    (vLLM in-process or behind its OpenAI-compatible server). For every other
    backend the regex cannot change the answer, so the engine leaves it out of
    the request, and so out of the cache key. Known without creating the
    adapter, because a dry run creates none.
    """
    if spec.adapter == "vllm":
        return True
    if spec.adapter == "openai-compatible":
        return spec.options.get("structured_outputs", "structured_outputs") != "none"
    return False


def adapter_names() -> tuple[str, ...]:
    return tuple(ADAPTER_FACTORIES)


def create_adapter(spec: JudgeSpec) -> Adapter:
    target = ADAPTER_FACTORIES.get(spec.adapter)
    if target is None:
        raise AdapterConfigError(
            f"judge {spec.name!r}: unknown adapter {spec.adapter!r}; expected one of {', '.join(ADAPTER_FACTORIES)}"
        )
    module_name, _, factory_name = target.partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, factory_name)(spec)
