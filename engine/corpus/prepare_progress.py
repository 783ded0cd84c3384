"""prepare's progress display: documents read / kept, on stderr."""

from __future__ import annotations

import time
from typing import Any


class progress_bar:
    """A rich status line on stderr (documents read / kept) when enabled."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._progress: Any = None
        self._task: Any = None
        self._last = 0.0

    def __enter__(self) -> Any:
        if self.enabled:
            from rich.console import Console
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self._progress = Progress(
                SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=Console(stderr=True)
            )
            self._progress.start()
            self._task = self._progress.add_task("preparing corpus", total=None)
        return self.advance

    def advance(self, summary: Any, *, force: bool = False) -> None:
        if self._progress is None:
            return
        now = time.monotonic()
        if force or now - self._last > 0.2:
            self._last = now
            self._progress.update(
                self._task,
                description=f"read {summary.read}  length-ok {summary.kept_length}  kept {summary.kept_screening}",
            )

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
