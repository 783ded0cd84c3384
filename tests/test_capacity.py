"""engine.run.capacity and the dry run's wall-time / GPU-hour estimate: known
answers for the arithmetic, and the dry run of a real experiment with a
configured rate, then with a rate measured from the calls it made."""

from __future__ import annotations

import pytest

from engine.config import Capacity
from engine.run.capacity import MIN_MEASURED_CALLS, busy_seconds, estimate, judge_gpus, measured_rate, observed_intervals
from engine.cache.call_cache import CallCache
from engine.cli import main as cli_main
from engine.commands.run import capacity_lines
from engine.run.experiment import Experiment
from engine.run.runner import plan_experiment, run_experiment
from experiments import write_experiment

EXPERIMENT = """
seed = 5
needles = ["none", "neg"]
hays = ["orig"]
positions = [[0, 0], [2, 2]]
[stopping]
kind = "fixed"
n = 15
[[judges]]
name = "jaccard"
adapter = "baseline"
model = "jaccard"
[judges.capacity]
calls_per_s = 0.01
gpus = 2
[[judges]]
name = "seqratio"
adapter = "baseline"
model = "seqratio"
"""


def test_36000_calls_at_10_per_s_on_2_gpus_is_1_hour_and_2_gpu_hours():
    plan = estimate("gemma", 36_000, configured=10.0, measured=None, measured_calls=0, gpus=2)
    assert (plan.wall_hours, plan.gpu_hours, plan.rate_source) == (1.0, 2.0, "configured")
    api = estimate("gpt", 36_000, configured=None, measured=20.0, measured_calls=500, gpus=None)
    assert (api.wall_hours, api.gpu_hours, api.rate_source) == (0.5, None, "measured (500 calls)")
    unknown = estimate("x", 10, configured=None, measured=None, measured_calls=0, gpus=1)
    assert (unknown.wall_hours, unknown.gpu_hours, unknown.rate_source) == (None, None, "none")


def test_configured_rate_wins_over_the_measured_one_and_both_are_kept():
    plan = estimate("gemma", 7_200, configured=2.0, measured=4.0, measured_calls=100, gpus=1)
    assert (plan.calls_per_s, plan.measured_calls_per_s, plan.wall_hours) == (2.0, 4.0, 1.0)


def test_busy_time_is_the_union_of_call_intervals():
    # [0,2] and [1,3] overlap -> 3 s; [10,11] alone -> 1 s; [10.5,10.7] inside it
    assert busy_seconds([(10, 11), (0, 2), (1, 3), (10.5, 10.7)]) == 4.0
    assert busy_seconds([]) == 0.0


def test_measured_rate_ignores_gaps_between_sessions_and_needs_enough_calls():
    # 60 calls, 10 at a time for 1 s each, in two sessions an hour apart: 3 busy s each
    session = [(t + s, t + s + 1.0) for s in range(3) for t in (0.0,) for _ in range(10)]
    later = [(3600 + a, 3600 + b) for a, b in session]
    assert measured_rate(session + later) == pytest.approx(60 / 6)
    assert measured_rate(session[: MIN_MEASURED_CALLS - 1]) is None
    assert measured_rate([(0.0, 0.0)] * 100) is None  # untimed results measure nothing


def test_gpus_come_from_capacity_or_the_vllm_parallel_sizes():
    assert judge_gpus("vllm", {"tensor_parallel_size": 2, "data_parallel_size": 4}, None) == 8
    assert judge_gpus("vllm", {"tensor_parallel_size": 2, "pipeline_parallel_size": 2, "data_parallel_size": 2}, None) == 8
    assert judge_gpus("vllm", {}, None) == 1
    assert judge_gpus("vllm", {"tensor_parallel_size": 2}, Capacity(gpus=3)) == 3
    assert judge_gpus("openai", {}, None) is None
    with pytest.raises(ValueError, match=r"capacity.calls_per_s = 0: expected a positive number"):
        Capacity(calls_per_s=0)


def test_dry_run_estimates_from_the_configured_then_the_measured_rate(tmp_path, prepared_store, corpus_slice_path, corpus_settings, capsys):  # type: ignore[no-untyped-def]
    config = write_experiment(tmp_path, prepared_store, corpus_slice_path, corpus_settings, EXPERIMENT)
    plan = plan_experiment(config)
    jaccard, seqratio = plan.capacity
    assert jaccard.calls == seqratio.calls == plan.upper_bound_calls // 2 > 0
    assert jaccard.rate_source == "configured" and jaccard.wall_hours == pytest.approx(jaccard.calls / 0.01 / 3600)
    assert jaccard.gpu_hours == pytest.approx(2 * jaccard.wall_hours)
    assert (seqratio.rate_source, seqratio.wall_hours, seqratio.gpus) == ("none", None, None)

    run_experiment(config)
    experiment = Experiment(config)
    try:
        intervals = observed_intervals(experiment.store, bytes.fromhex(experiment.run_id), CallCache(experiment.store))
    finally:
        experiment.close()
    assert len(intervals["seqratio"]) == seqratio.calls  # every call made is observed, once
    after = plan_experiment(config)
    assert after.capacity[1].calls == 0
    measured = after.capacity[1].measured_calls_per_s
    assert len(intervals["seqratio"]) >= MIN_MEASURED_CALLS and measured is not None
    assert measured == pytest.approx(measured_rate(intervals["seqratio"])) and measured > 0

    assert cli_main(["run", str(tmp_path / "exp.toml"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "judge jaccard: 0 calls at 0.01 calls/s (configured" in out and "GPU-hours on 2 GPU(s)" in out


def test_dry_run_lines_say_the_rate_and_its_source():
    lines = capacity_lines(
        [
            estimate("gemma", 36_000, configured=10.0, measured=12.5, measured_calls=80, gpus=2),
            estimate("gpt", 100, configured=None, measured=None, measured_calls=0, gpus=None),
        ]
    )
    assert lines[0] == "judge gemma: 36,000 calls at 10 calls/s (configured; measured 12.5 calls/s) = 1.00 h wall, 2.00 GPU-hours on 2 GPU(s)"
    assert lines[1].startswith("judge gpt: 100 calls; no time estimate (set [judges.capacity] calls_per_s")
    assert lines[2] == "judges run side by side: the run's wall time is about the longest judge's"
