"""The hand-labelled needle gold set (tests/data/needle_gold/*.jsonl): reading
it and regenerating each sentence's needle with the current generator.

One JSON object a line: type, doc_id, sentence, perturbed, span_before,
span_after, rule, label (RUBRIC.md: correct / meaning-odd / ungrammatical /
wrong, or "skipped" for a refusal), generator ("before": the generator at the
start of issue 14; "after": the current one), note, and for neg/con
`context`: the text of the sentence's paragraph before it, so the sentence
is re-parsed with the context the needle rules read (an open quotation).

A regenerated output is looked up among the labelled outputs of the same
(type, doc_id, sentence); an output nobody labelled counts as "unlabelled",
never as correct.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec

GOLD_DIR = Path(__file__).resolve().parents[1] / "tests" / "data" / "needle_gold"
LABELS = ("correct", "meaning-odd", "ungrammatical", "wrong", "skipped")
DEFECTS = ("ungrammatical", "wrong")


class GoldRecord(msgspec.Struct, kw_only=True):
    type: str
    doc_id: str
    sentence: str
    perturbed: str | None  # None: the generator refused the sentence
    span_before: str = ""
    span_after: str = ""
    rule: str = ""
    label: str
    generator: str
    note: str = ""
    context: str = ""
    start: int = -1  # offset of span_before in the sentence

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.type, self.doc_id, self.sentence)


def read_gold(path: Path) -> list[GoldRecord]:
    records = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = msgspec.json.decode(line, type=GoldRecord)
        except msgspec.ValidationError as error:
            raise ValueError(f"{path}:{n}: {error}") from None
        if record.label not in LABELS:
            raise ValueError(f"{path}:{n}: label {record.label!r} is not one of {LABELS}")
        if record.generator not in ("before", "after"):
            raise ValueError(f"{path}:{n}: generator {record.generator!r}: expected 'before' or 'after'")
        records.append(record)
    return records


def regenerate_negcon(nlp: Any, records: Iterable[GoldRecord]) -> dict[tuple[str, str, str], Any]:
    """key -> the current generator's TextEdit (or None) for each distinct neg/con sentence,
    re-parsed after its paragraph context."""
    from engine.conjunctions import swap_conjunction
    from engine.negation import negate

    rules = {"neg": negate, "con": swap_conjunction}
    unique = {r.key: r for r in records if r.type in rules}
    texts = [r.context + r.sentence for r in unique.values()]
    results = {}
    for record, doc in zip(unique.values(), nlp.pipe(texts, batch_size=32)):
        span = doc.char_span(len(record.context), len(record.context) + len(record.sentence), alignment_mode="expand")
        results[record.key] = None if span is None else rules[record.type](span)
    return results


def lookup(records: Iterable[GoldRecord], key: tuple[str, str, str], perturbed: str | None) -> str:
    """The label given to exactly this output of this sentence, or "unlabelled"."""
    for record in records:
        if record.key == key and record.perturbed == perturbed:
            return record.label
    return "unlabelled"


def to_json_line(record: GoldRecord) -> str:
    return json.dumps(msgspec.to_builtins(record), ensure_ascii=False)
