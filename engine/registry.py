"""The adapter registry: the only way the engine reaches a concrete adapter.

Adapter name -> the `Backend` an adapter module declares (engine.contracts),
named by "module:attribute" and imported on first use: the engine never
imports `adapters` (the layer above it) and a run with API judges never
imports vLLM.
"""

from __future__ import annotations

import importlib

from engine.contracts import Adapter, AdapterConfigError, Backend, BatchAdapter, Capabilities, JudgeSpec

BACKENDS: dict[str, str] = {
    "openai": "adapters.openai:OPENAI",
    "openai-compatible": "adapters.openai:OPENAI_COMPATIBLE",
    "azure": "adapters.openai:AZURE",
    "anthropic": "adapters.anthropic:ANTHROPIC",
    "gemini": "adapters.gemini:GEMINI",
    "vllm": "adapters.vllm:VLLM",
    "baseline": "adapters.baseline:BASELINE",
}


def backend(spec: JudgeSpec) -> Backend:
    target = BACKENDS.get(spec.adapter)
    if target is None:
        raise AdapterConfigError(
            f"judge {spec.name!r}: unknown adapter {spec.adapter!r}; expected one of {', '.join(BACKENDS)}"
        )
    module_name, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module_name), attribute)


def capabilities(spec: JudgeSpec) -> Capabilities:
    """What the judge's backend honours, without creating its adapter."""
    return backend(spec).capabilities(spec)


def free_answers(spec: JudgeSpec) -> bool:
    """The judge's answers cost nothing to compute again (`Backend.free_answers`)."""
    return backend(spec).free_answers


def create_adapter(spec: JudgeSpec) -> Adapter:
    return backend(spec).create(spec)


def create_batch_adapter(spec: JudgeSpec) -> BatchAdapter:
    create = backend(spec).create_batch
    if create is None:
        batch = sorted(name for name in BACKENDS if name_has_batch(name))
        raise AdapterConfigError(
            f"judge {spec.name!r}: mode = \"batch\" but adapter {spec.adapter!r} has no batch API; "
            f"expected one of {', '.join(batch) or '(none yet)'} or mode = \"sync\""
        )
    if isinstance(create, str):
        module_name, _, attribute = create.partition(":")
        create = getattr(importlib.import_module(module_name), attribute)
    return create(spec)


def name_has_batch(name: str) -> bool:
    module_name, _, attribute = BACKENDS[name].partition(":")
    return getattr(importlib.import_module(module_name), attribute).create_batch is not None


def in_config(source: str, exc: AdapterConfigError) -> AdapterConfigError:
    """`exc` with the config file that declared the judge in front."""
    return AdapterConfigError(f"{source or '<config>'}: {exc}")
