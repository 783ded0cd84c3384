"""engine.run.judge_health: what a failure means for the item and for the judge."""

from __future__ import annotations

import anyio
import pytest

from engine.contracts import CallResult
from engine.run.judge_health import FailurePolicy, JudgeHealth, RunAborted, fatal_message, is_transient


def error(kind: str) -> CallResult:
    return CallResult(status="error", text=f"HTTP 503 ({kind})", error_kind=kind)


def test_only_answers_about_the_item_are_not_transient() -> None:
    for kind in ("server", "timeout", "connection", "rate_limit", "overloaded", "malformed", "circuit_open", ""):
        assert is_transient(error(kind)), kind
    assert not is_transient(error("context_length"))
    assert not is_transient(CallResult(status="refused", text="no"))
    assert not is_transient(CallResult(status="ok", text="Score: 3"))
    assert fatal_message("j", error("auth")) is not None and "judge 'j'" in fatal_message("j", error("auth"))  # type: ignore[operator]
    assert fatal_message("j", error("server")) is None
    wrong_url = fatal_message("j", error("protocol"))  # a 101 Switching Protocols answer
    assert wrong_url is not None and "judge 'j'" in wrong_url and "base_url" in wrong_url
    gone = fatal_message("j", error("engine_dead"))  # a dead in-process vLLM engine: no waiting for it
    assert gone is not None and "run the same config again to resume" in gone


def test_a_configs_failures_table_sets_the_policy_and_unset_keys_keep_the_defaults() -> None:
    from engine.config import parse_config

    judge = '[[judges]]\nname = "j"\nadapter = "baseline"\nmodel = "jaccard"\n'
    config = parse_config('store = "s"\noutput = "o"\n[failures]\nmax_outage_s = 45\nconsecutive_failures = 5\n' + judge)
    policy = FailurePolicy.from_config(config.failures)
    assert (policy.max_outage_s, policy.consecutive_failures) == (45.0, 5)
    assert policy.probe_cap_s == FailurePolicy().probe_cap_s and policy.retry_base_s == FailurePolicy().retry_base_s
    assert FailurePolicy.from_config(parse_config('store = "s"\noutput = "o"\n' + judge).failures) == FailurePolicy()


def test_retry_delays_double_up_to_the_cap() -> None:
    policy = FailurePolicy(retry_base_s=0.5, retry_cap_s=3.0)
    assert [policy.retry_delay(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]


def test_the_judge_is_down_after_the_threshold_or_an_open_breaker_and_up_on_an_answer() -> None:
    health = JudgeHealth("j", FailurePolicy(consecutive_failures=3), clock=lambda: 10.0)
    health.failed(error("server"))
    health.failed(error("server"))
    assert not health.down
    health.answered()  # an answer resets the count
    health.failed(error("server"))
    health.failed(error("server"))
    assert not health.down
    health.failed(error("server"))
    assert health.down and health.down_since == 10.0
    health.answered()
    assert not health.down and health.consecutive == 0
    health.failed(error("circuit_open"))  # the adapter's breaker: down at once
    assert health.down


@pytest.mark.anyio
async def test_probing_stops_the_run_once_the_outage_is_too_long() -> None:
    now = [0.0]
    policy = FailurePolicy(consecutive_failures=1, probe_base_s=0.01, probe_cap_s=0.02, max_outage_s=5.0)
    health = JudgeHealth("judge-x", policy, clock=lambda: now[0])
    health.failed(error("timeout"))
    await health.pause_before_probe(pending=3)  # within the outage: sleeps, then the caller probes
    assert health.probes == 1
    now[0] = 5.0
    with pytest.raises(RunAborted) as caught:
        await health.pause_before_probe(pending=3)
    message = str(caught.value)
    assert "judge 'judge-x' is failing" in message and "timeout" in message
    assert "3 item(s)" in message and "run the same config again to resume" in message


@pytest.mark.anyio
async def test_workers_waiting_for_a_down_judge_resume_when_it_answers() -> None:
    health = JudgeHealth("j", FailurePolicy(consecutive_failures=1))
    health.failed(error("server"))
    resumed = []

    async def waiter() -> None:
        await health.wait_up()
        resumed.append(True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(waiter)
        await anyio.wait_all_tasks_blocked()
        assert resumed == []
        health.answered()
    assert resumed == [True]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
