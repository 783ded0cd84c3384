"""engine.run.progress: the live display reads the scheduler's counters."""

from __future__ import annotations

import sys

import anyio
import pytest
from rich.console import Console

from engine.contracts import CallResult
from engine.run.progress import ProgressDisplay, summary_line
from engine.run.scheduler import Progress


def counters() -> Progress:
    p = Progress()
    p.calls_network, p.calls_cached, p.in_flight = 1200, 300, 16
    p.cells_total, p.cells_done, p.cells_reused = 80, 20, 5
    p.rows_written, p.items_done, p.failed_items, p.planned_items = 1500, 1500, 7, 8000
    p.prompt_tokens, p.completion_tokens, p.cost_usd = 720_000, 2400, 0.1234
    return p


def test_render_shows_calls_cells_tokens_cost_and_an_eta() -> None:
    display = ProgressDisplay(counters())
    console = Console(record=True, width=120)
    console.print(display.render())
    text = console.export_text()
    for fragment in ("1,200 done", "300 cached", "16 in flight", "20 / 80 ended", "7 failed", "720,000 in", "2,400 out", "$0.1234", "ETA <="):
        assert fragment in text, fragment


def test_summary_line_eta_is_the_remaining_upper_bound_over_the_rate() -> None:
    line = summary_line(counters(), rate=100.0)
    assert "ETA <= 1:05" in line  # (8000 - 1500) / 100 = 65 s
    assert "cells 20/80" in line


def test_the_display_refreshes_until_cancelled(capsys: pytest.CaptureFixture[str]) -> None:
    progress = counters()

    async def main() -> None:
        with anyio.move_on_after(0.3):
            await ProgressDisplay(progress, refresh_s=0.05).run()

    anyio.run(main)
    assert "1,200 done" in capsys.readouterr().err


def test_a_captured_log_gets_the_panel_border_on_its_own_line(capsys: pytest.CaptureFixture[str]) -> None:
    async def main() -> None:
        with anyio.move_on_after(0.2):  # the runner ends the display by cancelling it
            await ProgressDisplay(counters(), refresh_s=0.05).run()
        print("run finished", file=sys.stderr)

    anyio.run(main)
    lines = capsys.readouterr().err.splitlines()
    assert "run finished" in lines  # not glued to the border: "╯run finished"
    assert lines[lines.index("run finished") - 1].strip().endswith("╯")


def rendered(progress: Progress) -> str:
    console = Console(record=True, width=160)
    console.print(ProgressDisplay(progress).render())
    return console.export_text()


def test_the_eta_is_shown_only_when_the_rate_makes_it_finite() -> None:
    idle = counters()
    assert "ETA" not in summary_line(idle, rate=0.0) and "?" not in summary_line(idle, rate=0.0)
    # a rate of ~0 (one item in hours) gave "ETA <= 257895504171011257362583732424480386507:39:44" (issue 33)
    assert "ETA" not in summary_line(idle, rate=1e-30)
    nothing_done = Progress()
    nothing_done.planned_items = 500
    assert "ETA" not in rendered(nothing_done)  # no item judged yet: no rate


def test_a_judge_down_or_not_answering_is_named_in_the_display() -> None:
    from engine.run.judge_health import FailurePolicy, JudgeHealth

    now = [100.0]
    progress = counters()
    quiet = JudgeHealth("hung", FailurePolicy(), clock=lambda: now[0], url="http://127.0.0.1:9/v1", timeout_s=60.0)
    down = JudgeHealth("gone", FailurePolicy(consecutive_failures=1), clock=lambda: now[0])
    fine = JudgeHealth("fine", FailurePolicy(), clock=lambda: now[0])
    progress.health = {"hung": quiet, "gone": down, "fine": fine}
    quiet.sent()
    down.answered()
    down.failed(CallResult(status="error", text="HTTP 502", error_kind="server"))
    fine.sent()
    now[0] = 106.0
    fine.returned(CallResult(status="ok", text="Score: 4"))
    fine.sent()
    now[0] = 107.0
    text = rendered(progress)
    assert "hung: not answering at http://127.0.0.1:9/v1: 1 call(s) waiting, no response for 0:07" in text
    assert "gone: down for 0:07 after 1 failed calls in a row (server)" in text
    assert "fine:" not in text  # it answered a second ago: nothing to say
