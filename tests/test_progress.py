"""engine.run.progress: the live display reads the scheduler's counters."""

from __future__ import annotations

import sys

import anyio
import pytest
from rich.console import Console

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
