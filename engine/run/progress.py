"""The live progress display of `needlejudge run` (rich), off in quiet mode."""

from __future__ import annotations

import sys
import time
from typing import Any

import anyio

from engine.run.scheduler import Progress


def _duration(seconds: float) -> str:
    if seconds != seconds or seconds == float("inf"):
        return "?"
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def summary_line(progress: Progress, rate: float) -> str:
    remaining = max(0, progress.planned_items - progress.rows_written)
    eta = remaining / rate if rate > 0 else float("inf")
    tokens = progress.prompt_tokens + progress.completion_tokens
    return (
        f"calls {progress.calls_network:,} done, {progress.calls_cached:,} cached, {progress.in_flight} in flight | "
        f"cells {progress.cells_done:,}/{progress.cells_total:,} | "
        f"{rate:,.0f} items/s | tokens {tokens:,} | ${progress.cost_usd:,.4f} | "
        f"elapsed {_duration(progress.elapsed)} | ETA <= {_duration(eta)}"
    )


class ProgressDisplay:
    """Refreshes a one-panel rich display from the scheduler's counters."""

    def __init__(self, progress: Progress, *, title: str = "needlejudge run", refresh_s: float = 0.25) -> None:
        self.progress = progress
        self.title = title
        self.refresh_s = refresh_s
        self._last = (time.monotonic(), 0)
        self._rate = 0.0

    def _rate_now(self) -> float:
        now = time.monotonic()
        then, items = self._last
        done = self.progress.items_done
        if now - then >= 1.0:
            instant = (done - items) / (now - then)
            self._rate = instant if self._rate == 0 else 0.7 * self._rate + 0.3 * instant
            self._last = (now, done)
        elif self._rate == 0 and self.progress.elapsed > 0:
            self._rate = done / self.progress.elapsed
        return self._rate

    def render(self) -> Any:
        from rich.table import Table

        p = self.progress
        rate = self._rate_now()
        remaining = max(0, p.planned_items - p.rows_written)
        eta = remaining / rate if rate > 0 else float("inf")
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold")
        table.add_column()
        table.add_row("calls", f"{p.calls_network:,} done · {p.calls_cached:,} cached · {p.in_flight} in flight")
        table.add_row("cells", f"{p.cells_done:,} / {p.cells_total:,} ended ({p.cells_reused:,} from earlier runs)")
        table.add_row("items", f"{p.rows_written:,} judged · {p.failed_items:,} failed (replaced) · {rate:,.0f}/s")
        table.add_row("tokens", f"{p.prompt_tokens:,} in · {p.completion_tokens:,} out")
        table.add_row("cost", f"${p.cost_usd:,.4f} this run")
        table.add_row("time", f"{_duration(p.elapsed)} elapsed · ETA <= {_duration(eta)} (upper bound)")
        return table

    async def run(self) -> None:
        """Refresh until cancelled (the runner cancels it when the scheduler ends)."""
        from rich.console import Console
        from rich.live import Live
        from rich.panel import Panel

        console = Console(file=sys.stderr)
        try:
            with Live(Panel(self.render(), title=self.title), console=console, auto_refresh=False, transient=False) as live:
                try:
                    while True:
                        await anyio.sleep(self.refresh_s)
                        live.update(Panel(self.render(), title=self.title), refresh=True)
                finally:
                    live.update(Panel(self.render(), title=self.title), refresh=True)
        finally:
            # The display ends by cancellation, so this must be in a finally:
            # a captured log gets the panel's last border on its own line.
            if not console.is_terminal:
                console.line()
