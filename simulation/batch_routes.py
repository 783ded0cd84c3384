"""Every batch route of the fake server, per provider (simulation/batch_*.py)."""

from __future__ import annotations

from typing import Any

from simulation import batch_anthropic, batch_gemini, batch_openai
from simulation.batch_endpoints import BatchBook


def batch_routes(book: BatchBook) -> list[tuple[str, str, Any]]:
    return [*batch_openai.routes(book), *batch_anthropic.routes(book), *batch_gemini.routes(book)]
