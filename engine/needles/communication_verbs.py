"""The verbs of saying, judging and urging by WordNet (the seeds "say",
"speak", "criticize", "praise", "defend", "advocate", "urge", "warn",
"call_for", "complain", "describe", "explain", "admit", "mention", ... and
every verb whose first sense is a troponym of a seed's):
the neg needle refuses to negate one (engine.needles.negation), since the
document usually gives what was said beside it and "not" would deny only the
saying. The table is engine/needles/communication_verbs.json, derived once by
scripts/derive_communication_verbs.py from WordNet 3.0 (lower-case lemmas, a
verb and its particle joined by "_": "call_for")."""

from __future__ import annotations

import json
from pathlib import Path

COMMUNICATION_VERBS = frozenset(
    json.loads(Path(__file__).with_name("communication_verbs.json").read_text(encoding="utf-8"))["COMMUNICATION_VERBS"]
)
