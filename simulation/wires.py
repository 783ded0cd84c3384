"""The provider wire dialects the fake server speaks, one instance each
(simulation/wire_*.py): the synchronous routes and the batch endpoints both
look a provider's dialect up here."""

from __future__ import annotations

from simulation.wire import WireDialect
from simulation.wire_anthropic import MessagesWire
from simulation.wire_gemini import GenerateContentWire
from simulation.wire_openai import AzureWire, ChatCompletionsWire

WIRES: tuple[WireDialect, ...] = (ChatCompletionsWire(), AzureWire(), MessagesWire(), GenerateContentWire())


def wire_of(provider: str) -> WireDialect:
    return next(w for w in WIRES if w.provider == provider)
