"""`needlejudge run --dry-run` for batch judges: the batch discount in the
cost bound and an estimate of the waves, on the session's prepared corpus."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from engine import registry
from engine.cli import main
from engine.contracts import AdapterConfigError, Backend, Capabilities
from engine.run.plan import plan_experiment
from experiments import write_experiment


class _NoCalls:
    """An adapter the dry run may make and drop (issue 32: it checks what the
    run checks), but never use: any use is a call."""

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        raise AssertionError(f"a dry run makes no call (adapter.{name})")


def _no_calls(spec):  # type: ignore[no-untyped-def]
    return _NoCalls()


# A backend with a batch API, known to the registry like any adapter.
BATCHABLE = Backend(capabilities=lambda spec: Capabilities(batch_api=True), create=_no_calls, create_batch=_no_calls)
registry.BACKENDS.setdefault("batchable", "test_batch_plan:BATCHABLE")

DESIGN = """
seed = 1
needles = ["neg", "con"]
hays = ["orig"]
positions = [[0, 0], [1, 1]]
[stopping]
{stopping}
"""
JUDGE = """
[[judges]]
name = "{name}"
adapter = "{adapter}"
model = "m-1"
prompts = ["bands"]
mode = "{mode}"
batch_poll_s = 60
prices = {{ input = 2.0, output = 8.0, batch_discount = {discount} }}
"""


def experiment(folder: Path, fixtures, stopping: str, *judges: tuple[str, str, str, float]):  # type: ignore[no-untyped-def]
    body = DESIGN.format(stopping=stopping) + "".join(
        JUDGE.format(name=name, adapter=adapter, mode=mode, discount=discount) for name, adapter, mode, discount in judges
    )
    return write_experiment(folder, *fixtures, body)


@pytest.fixture
def fixtures(prepared_store, corpus_slice_path, corpus_settings):  # type: ignore[no-untyped-def]
    return prepared_store, corpus_slice_path, corpus_settings


def test_batch_judge_priced_at_its_discount(tmp_path: Path, fixtures) -> None:
    fixed = 'kind = "fixed"\nn = 5'
    both_sync = plan_experiment(experiment(tmp_path / "a", fixtures, fixed, ("s", "batchable", "sync", 0.5), ("t", "batchable", "sync", 0.5)))
    mixed = plan_experiment(experiment(tmp_path / "b", fixtures, fixed, ("s", "batchable", "sync", 0.5), ("t", "batchable", "batch", 0.5)))
    # two identical judges: the batch one costs half, so the whole bound is 3/4
    assert both_sync.upper_bound_cost_usd > 0 and both_sync.batch == {}
    assert mixed.upper_bound_cost_usd == pytest.approx(0.75 * both_sync.upper_bound_cost_usd)
    assert mixed.upper_bound_calls == both_sync.upper_bound_calls
    assert list(mixed.batch) == ["t"] and mixed.batch["t"].waves == 1 and mixed.batch["t"].price_factor == 0.5


def test_waves_estimate_for_ci_and_the_printed_plan(tmp_path: Path, fixtures, capsys: pytest.CaptureFixture[str]) -> None:
    ci = 'kind = "ci"\nepsilon = 3.0\nmin_docs = 2\nmax_docs = 40'
    config = experiment(tmp_path / "c", fixtures, ci, ("t", "batchable", "batch", 0.4))
    plan = plan_experiment(config)
    cap = min(40, plan.documents)
    # 2 -> 8 -> 32 -> 128: one wave per growth step of 4 until the cap, the first included
    expected = 1 + math.ceil(math.log(cap / 2, 4))
    assert plan.batch["t"].waves == expected
    assert main(["run", str(config.source), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "judge t: batch mode, priced at 0.4x" in out and f"about {expected} wave(s)" in out and "every 60 s" in out


def test_batch_mode_on_an_adapter_without_batch_api_is_refused(tmp_path: Path, fixtures) -> None:
    config = experiment(tmp_path / "d", fixtures, 'kind = "fixed"\nn = 5', ("base", "baseline", "batch", 0.5))
    with pytest.raises(AdapterConfigError, match=r"exp\.toml.*'base'.*no batch API"):
        plan_experiment(config)
