"""engine.run.runner: what a run lets wait for a commit, by what losing an answer costs."""

from __future__ import annotations

from pathlib import Path

from engine.config import parse_config
from engine.run.runner import FREE_UNCOMMITTED_BOUND, uncommitted_bound

API_JUDGE = """
[[judges]]
name = "gpt"
adapter = "openai"
model = "gpt-4o-mini-2024-07-18"
concurrency = 24
"""
LOCAL_SERVER_JUDGE = """
[[judges]]
name = "gemma"
adapter = "openai-compatible"
model = "gemma-3-4b-it"
base_url = "http://127.0.0.1:8000/v1"
concurrency = 40
"""
FREE_JUDGES = """
[[judges]]
name = "seq"
adapter = "baseline"
model = "seqratio"
concurrency = 64
[[judges]]
name = "jac"
adapter = "baseline"
model = "jaccard"
concurrency = 32
"""


def config(tmp_path: Path, judges: str):  # type: ignore[no-untyped-def]
    return parse_config('store = "s"\noutput = "o"\n' + judges, source="exp.toml", base_dir=tmp_path)


def test_paid_judges_may_leave_only_their_calls_in_flight_plus_8_uncommitted(tmp_path: Path) -> None:
    both = config(tmp_path, API_JUDGE + LOCAL_SERVER_JUDGE)
    assert uncommitted_bound(both, {"gpt", "gemma"}) == 24 + 40 + 8
    # a judge with no work left keeps nothing in flight
    assert uncommitted_bound(both, {"gemma"}) == 40 + 8


def test_free_judges_alone_commit_in_large_batches(tmp_path: Path) -> None:
    free = config(tmp_path, FREE_JUDGES)
    assert uncommitted_bound(free, {"seq", "jac"}) == FREE_UNCOMMITTED_BOUND == 8192
    assert uncommitted_bound(free, {"jac"}) == FREE_UNCOMMITTED_BOUND


def test_one_busy_paid_judge_makes_every_answer_count_against_the_tight_bound(tmp_path: Path) -> None:
    mixed = config(tmp_path, FREE_JUDGES + API_JUDGE)
    # free answers share the writer's queue with paid ones: all of them count
    assert uncommitted_bound(mixed, {"seq", "jac", "gpt"}) == 64 + 32 + 24 + 8
    # once the paid judge is done, only free answers are at stake
    assert uncommitted_bound(mixed, {"seq", "jac"}) == FREE_UNCOMMITTED_BOUND
