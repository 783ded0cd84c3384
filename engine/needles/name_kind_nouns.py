"""Common nouns that can say what a named thing is, by WordNet class: a
person, a group (a firm, a party, a nation), a place; and the nouns of time
(engine.corpus.run_on_headings: a noun before a name says what it is, or
opens an adverb of time). The tables are engine/needles/name_kind_nouns.json,
derived once by scripts/derive_name_kind_nouns.py from WordNet 3.0; the
lemmas are lower case, two words joined by "_" ("think_tank")."""

from __future__ import annotations

import json
from pathlib import Path

_TABLES = json.loads(Path(__file__).with_name("name_kind_nouns.json").read_text(encoding="utf-8"))

PERSON_NOUNS = frozenset(_TABLES["PERSON_NOUNS"])
GROUP_NOUNS = frozenset(_TABLES["GROUP_NOUNS"])
PLACE_NOUNS = frozenset(_TABLES["PLACE_NOUNS"])
TIME_NOUNS = frozenset(_TABLES["TIME_NOUNS"])
# those whose first (most frequent) WordNet sense is of the class: "brother", not "center" (a place first)
PERSON_FIRST_NOUNS = frozenset(_TABLES["PERSON_NOUNS_FIRST"])
GROUP_FIRST_NOUNS = frozenset(_TABLES["GROUP_NOUNS_FIRST"])
PLACE_FIRST_NOUNS = frozenset(_TABLES["PLACE_NOUNS_FIRST"])
