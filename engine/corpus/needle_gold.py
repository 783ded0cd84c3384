"""The hand-labelled needle gold set (tests/data/needle_gold/*.jsonl): reading
it and regenerating each sentence's needle with the current generator.

One JSON object a line: type, doc_id, sentence, perturbed, span_before,
span_after, rule, label (RUBRIC.md: correct / meaning-odd / ungrammatical /
wrong, or "skipped" for a refusal), generator ("before": the generator at the
start of issue 14; "after": the current one; "earlier": an output of an
earlier "after" generator that the current one no longer makes, kept with
its label; "md": the current ner generator's output with the optional
en_core_web_md model, engine.corpus.nlp; "agree": its output with two-model
agreement, model "en_core_web_sm+en_core_web_md"), note, and for neg/con
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

GOLD_DIR = Path(__file__).resolve().parents[2] / "tests" / "data" / "needle_gold"
LABELS = ("correct", "meaning-odd", "ungrammatical", "wrong", "skipped")
DEFECTS = ("ungrammatical", "wrong")
GENERATORS = ("before", "after", "earlier", "md", "agree")
# a set drawn with one model setting (its file name ends "_<suffix>") holds
# only that setting's outputs and is evaluated only with it
DRAWN_WITH = {"md": "en_core_web_md", "sm": "en_core_web_sm", "agree": "en_core_web_sm+en_core_web_md"}
NOT_FOUND = "<sentence not found in the re-parsed document>"  # counted as unlabelled, never as skipped


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


def drawn_with(path: Path) -> str | None:
    """The model setting a gold set was drawn with (DRAWN_WITH), or None: any model."""
    return DRAWN_WITH.get(path.stem.rsplit("_", 1)[-1]) if "_" in path.stem else None


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
        if record.generator not in GENERATORS:
            raise ValueError(f"{path}:{n}: generator {record.generator!r}: expected one of {GENERATORS}")
        records.append(record)
    return records


def regenerate_negcon(nlp: Any, records: Iterable[GoldRecord]) -> dict[tuple[str, str, str], Any]:
    """key -> the current generator's TextEdit (or None) for each distinct neg/con sentence,
    re-parsed after its paragraph context."""
    from engine.needles.conjunctions import swap_conjunction
    from engine.needles.negation import negate

    rules = {"neg": negate, "con": swap_conjunction}
    unique = {r.key: r for r in records if r.type in rules}
    texts = [r.context + r.sentence for r in unique.values()]
    results = {}
    for record, doc in zip(unique.values(), nlp.pipe(texts, batch_size=32)):
        span = doc.char_span(len(record.context), len(record.context) + len(record.sentence), alignment_mode="expand")
        results[record.key] = None if span is None else rules[record.type](span)
    return results


def seeded_ner_output(sentence: str, options: Any, doc_id: str, seed: int = 1) -> str | None:
    """The ner needle `needlejudge pairs` makes of `sentence` at `seed` (the
    draw of engine.corpus.pairs: option, then replacement), or None without options."""
    from engine.needles.edits import apply_entity
    from engine.seeding import item_rng

    if not options:
        return None
    rng = item_rng(seed, "ner", doc_id)
    option = options[int(rng.integers(len(options)))]
    replacement = option.replacements[int(rng.integers(len(option.replacements)))]
    return apply_entity(sentence, option, replacement)


def regenerate_ner(nlp: Any, records: Iterable[GoldRecord], seed: int = 1) -> dict[tuple[str, str, str], str | None]:
    """key -> the current ner output of each distinct ner sentence: its
    document re-parsed whole (bundled sample, cleaned), the sentence found
    among the sentences prepare stores (whitespace normalised as cleaning
    does), the seeded pick of pairs at `seed` (the seed the ner sets were
    labelled with); NOT_FOUND when the sentence is no longer one of the
    document's. A labelled output written with the dump's odd spaces is
    returned as labelled."""
    from engine.corpus.cleaning import clean_text, normalise_whitespace
    from engine.needles.entities import document_entity_texts, entity_options
    from engine.corpus.prepare import BUNDLED_CORPUS
    from engine.corpus.segmentation import document_sentences

    records = [r for r in records if r.type == "ner"]
    raw = {d["id"]: d for d in json.loads(BUNDLED_CORPUS.read_text(encoding="utf-8"))}
    unique = {r.key: r for r in records}
    doc_ids = sorted({r.doc_id for r in unique.values()})
    texts = [clean_text(raw[d]["text"], raw[d]["title"]) if d in raw else "" for d in doc_ids]
    labelled: dict[tuple[str, str, str], dict[str, str]] = {}
    for r in records:
        if r.perturbed:
            labelled.setdefault(r.key, {})[normalise_whitespace(r.perturbed)] = r.perturbed
    results: dict[tuple[str, str, str], str | None] = {}
    for doc_id, doc in zip(doc_ids, nlp.pipe(texts, batch_size=8)):
        entities = document_entity_texts(doc)
        by_text = {s.text.strip(): s for s in document_sentences(doc).spans}
        for key in (k for k in unique if k[1] == doc_id):
            sentence = normalise_whitespace(key[2])
            sent = by_text.get(sentence)
            if sent is None:  # the cleaning or the sentence splitting changed: the record needs redoing
                results[key] = NOT_FOUND
                continue
            output = seeded_ner_output(sentence, entity_options(sent, entities), doc_id, seed)
            results[key] = None if output is None else labelled.get(key, {}).get(output, output)
    return results


def lookup(records: Iterable[GoldRecord], key: tuple[str, str, str], perturbed: str | None) -> str:
    """The label given to exactly this output of this sentence, or "unlabelled"."""
    for record in records:
        if record.key == key and record.perturbed == perturbed:
            return record.label
    return "unlabelled"


def to_json_line(record: GoldRecord) -> str:
    return json.dumps(msgspec.to_builtins(record), ensure_ascii=False)
