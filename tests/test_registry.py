"""engine/registry.py: every adapter name resolves to the Backend its module
declares; a judge's capabilities are known without creating its adapter and
are the very capabilities the adapter carries; the engine layer never
imports the adapters above it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from http_fixtures import spec_for
from engine.contracts import AdapterConfigError, Backend, Capabilities, JudgeSpec
from engine.registry import BACKENDS, backend, capabilities, create_adapter

ROOT = Path(__file__).resolve().parents[1]


def spec(adapter: str, **options) -> JudgeSpec:
    if adapter in ("vllm", "baseline"):  # local backends: a model folder or measure, no HTTP options
        return JudgeSpec(name=f"test-{adapter}", adapter=adapter, model=str(ROOT) if adapter == "vllm" else "jaccard")
    return spec_for(adapter, "http://127.0.0.1:9", "m", options=options)


PRODUCT_BACKENDS = sorted(name for name, target in BACKENDS.items() if not target.startswith("tests."))


@pytest.mark.parametrize("name", sorted(set(PRODUCT_BACKENDS) - {"vllm"}))
def test_the_adapter_carries_the_capabilities_the_registry_declares(name: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for env in ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(env, "k")
    judge = spec(name)
    assert isinstance(backend(judge), Backend)
    assert create_adapter(judge).capabilities == capabilities(judge)


def test_declared_capabilities_per_backend() -> None:
    assert capabilities(spec("openai-compatible")).guided_decoding
    assert not capabilities(spec("openai-compatible", structured_outputs="none")).guided_decoding
    assert capabilities(spec("vllm")) == Capabilities(seed=True, guided_decoding=True, prompt_caching=True)
    assert not capabilities(spec("openai")).guided_decoding and capabilities(spec("openai")).seed
    assert not capabilities(spec("gemini")).guided_decoding
    assert capabilities(spec("anthropic")).prompt_caching and not capabilities(spec("anthropic", prompt_caching=False)).prompt_caching
    assert capabilities(spec("baseline")) == Capabilities()


def test_a_bad_option_is_reported_when_capabilities_are_asked() -> None:
    with pytest.raises(AdapterConfigError, match="structured_outputs"):
        capabilities(spec("openai-compatible", structured_outputs="xgrammar"))


def test_unknown_adapter_names_the_judge_and_the_choices() -> None:
    with pytest.raises(AdapterConfigError, match=r"'test-mystery'.*unknown adapter 'mystery'.*openai, "):
        backend(spec_for("mystery", "http://127.0.0.1:9", "m"))


def test_the_engine_layer_never_imports_adapters() -> None:
    offenders = []
    for path in (ROOT / "engine").rglob("*.py"):
        if "commands" in path.parts or path.name == "cli.py":
            continue  # the CLI commands sit above every layer
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            offenders += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] in ("adapters", "simulation")]
    assert offenders == []


def test_a_design_for_api_judges_loads_no_adapter_module() -> None:
    code = (
        "import sys\n"
        "from engine.config import parse_config\n"
        "from engine.run import design, runner\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in ('adapters', 'simulation')], sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_batch_mode_on_a_backend_without_a_batch_api_names_the_judge_and_adapter():
    from engine.registry import create_batch_adapter

    batchless = JudgeSpec(name="local", adapter="baseline", model="jaccard", mode="batch")
    with pytest.raises(AdapterConfigError, match=r"judge 'local': mode = \"batch\" but adapter 'baseline' has no batch API"):
        create_batch_adapter(batchless)
