"""Derive engine/needles/name_kind_nouns.json from WordNet 3.0: the common nouns that can name the kind of a named thing.

    apt-get install wordnet-base          # Debian's WordNet 3.0 database, /usr/share/wordnet
    python3 scripts/derive_name_kind_nouns.py [WORDNET_DIR] > engine/needles/name_kind_nouns.json

A common noun right before a name is prose when it says what the name is
("his predecessor Barack Obama", "the provincial capital Lashkar Gah", "tech
firm Apple"), and a heading run into the sentence when it cannot ("Currency
convergence China's journey ..."). WordNet files each noun sense under a
lexicographer class; three classes hold the kinds of names: noun.person (18),
noun.group (14: firms, parties, schools, nations) and noun.location (15:
countries, capitals, regions). Each table holds the lower-case lemmas
(two words joined by "_": "think_tank") with a sense in that class (any
sense: "star" the performer), and each a table *_FIRST of those whose first,
most frequent, sense is in it ("brother", not "center", whose first sense is
a place and whose basketball player is a person). A fourth, noun.time (28: "time", "moment",
"day"), holds the nouns whose phrase is an adverb of time ("The last time
Ann met Tom was ..."), not a heading's. Run once; the output is committed
(engine.needles.name_kind_nouns reads it for engine.corpus.run_on_headings).
WordNet 3.0 Copyright 2006 by Princeton University; its licence is quoted
in engine/needles/binomial_list.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

CLASSES = {"PERSON_NOUNS": "18", "GROUP_NOUNS": "14", "PLACE_NOUNS": "15", "TIME_NOUNS": "28"}


def class_lemmas(path: Path) -> dict[str, set[str]]:
    lemmas: dict[str, set[str]] = {lexfile: set() for lexfile in CLASSES.values()}
    for line in path.read_text(encoding="latin-1").splitlines():
        if not line or line.startswith("  "):
            continue  # the licence header
        fields = line.split(" | ")[0].split()
        lexfile, count = fields[1], int(fields[3], 16)
        if lexfile not in lemmas:
            continue
        for k in range(count):
            word = fields[4 + 2 * k]
            if word == word.lower() and word.replace("_", "").isalpha():
                lemmas[lexfile].add(word)  # "think_tank": two words, as run_on_headings joins them
    return lemmas


def first_senses(root: Path, lemmas: dict[str, set[str]]) -> dict[str, set[str]]:
    """The lemmas of each class whose first (most frequent) sense, by index.noun's order, is in it."""
    lexfiles = {}
    for line in (root / "data.noun").read_text(encoding="latin-1").splitlines():
        if line and not line.startswith("  "):
            fields = line.split()
            lexfiles[fields[0]] = fields[1]
    first: dict[str, set[str]] = {lexfile: set() for lexfile in lemmas}
    for line in (root / "index.noun").read_text(encoding="latin-1").splitlines():
        if not line or line.startswith("  "):
            continue
        fields = line.split()
        lemma, pointers = fields[0], int(fields[3])
        lexfile = lexfiles.get(fields[4 + pointers + 2])
        if lexfile in lemmas and lemma in lemmas[lexfile]:
            first[lexfile].add(lemma)
    return first


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/wordnet")
    lemmas = class_lemmas(root / "data.noun")
    first = first_senses(root, lemmas)
    # one table a line: a diff of a new derivation shows which tables changed
    rows = [f'"source": {json.dumps("WordNet 3.0, scripts/derive_name_kind_nouns.py")}']
    rows += [f"{json.dumps(name)}: {json.dumps(sorted(lemmas[lexfile]))}" for name, lexfile in CLASSES.items()]
    rows += [
        f"{json.dumps(name + '_FIRST')}: {json.dumps(sorted(first[lexfile]))}"
        for name, lexfile in CLASSES.items()
        if name != "TIME_NOUNS"
    ]
    print("{\n" + ",\n".join(rows) + "\n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
