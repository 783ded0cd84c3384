"""Needle validity against the hand-labelled gold set (tests/data/needle_gold).

For every *.jsonl file of the gold set, each distinct needle sentence is
regenerated with the CURRENT generator (re-parsed with the real spaCy model:
neg/con after their paragraph context, so an open quotation is seen; ner in
its whole document from the bundled sample, with the seeded pick of
`needlejudge pairs` at seed 1, the seed it was labelled with), and the label given to that exact output is
looked up (RUBRIC.md). An output nobody labelled is "unlabelled" and the
defect rate of its set is not reported until it is labelled.

Printed per set: the stored labels of the generator at the start of issue 14
("before", where the set has them) and the current generator ("now").
Defect rate = (ungrammatical + wrong) / needles produced (skipped excluded).

    python benchmarks/bench_needles.py [--types neg con] [--json]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.needle_gold import DEFECTS, GOLD_DIR, GoldRecord, lookup, read_gold, regenerate_negcon  # noqa: E402

COLUMNS = ("correct", "meaning-odd", "ungrammatical", "wrong", "skipped", "unlabelled")
NOT_FOUND = "<sentence not found in the re-parsed document>"  # counted as unlabelled, never as skipped


def regenerate_ner(nlp, records: list[GoldRecord], seed: int = 1) -> dict[tuple[str, str, str], str | None]:
    """key -> the current ner output: the document re-parsed whole (bundled
    sample, cleaned), the sentence found among its stored sentences (as
    prepare stores them; whitespace normalised as cleaning does), the seeded
    pick of pairs at the seed the ner gold set was labelled with (NOT_FOUND
    when the sentence is no longer one of the document's)."""
    from engine.cleaning import clean_text, normalise_whitespace
    from engine.entities import document_entity_texts, entity_options
    from engine.needles import apply_entity
    from engine.segmentation import document_sentences
    from engine.prepare import BUNDLED_CORPUS
    from engine.seeding import item_rng

    raw = {d["id"]: d for d in json.loads(BUNDLED_CORPUS.read_text(encoding="utf-8"))}
    unique = {r.key: r for r in records if r.type == "ner"}
    doc_ids = sorted({r.doc_id for r in unique.values()})
    texts = [clean_text(raw[d]["text"], raw[d]["title"]) if d in raw else "" for d in doc_ids]
    results: dict[tuple[str, str, str], str | None] = {}
    for doc_id, doc in zip(doc_ids, nlp.pipe(texts, batch_size=8)):
        entity_texts = document_entity_texts(doc)
        by_text = {s.text.strip(): s for s in document_sentences(doc).spans}
        for key, record in unique.items():
            if record.doc_id != doc_id:
                continue
            sentence = normalise_whitespace(record.sentence)
            sent = by_text.get(sentence)
            if sent is None:  # the cleaning or the sentence splitting changed: the record needs redoing
                results[key] = NOT_FOUND
                continue
            options = entity_options(sent, entity_texts)
            if not options:
                results[key] = None
                continue
            rng = item_rng(seed, "ner", doc_id)
            option = options[int(rng.integers(len(options)))]
            replacement = option.replacements[int(rng.integers(len(option.replacements)))]
            output = apply_entity(sentence, option, replacement)
            # a labelled output written with the dump's odd spaces is the same output
            labelled = (r.perturbed for r in records if r.key == key and r.perturbed)
            results[key] = next((p for p in labelled if normalise_whitespace(p) == output), output)
    return results


def tally(labels: list[str]) -> dict[str, object]:
    counts = Counter(labels)
    produced = len(labels) - counts["skipped"]
    row: dict[str, object] = {c: counts[c] for c in COLUMNS}
    row["n"] = len(labels)
    if counts["unlabelled"]:
        row["defect_rate"] = None
    else:
        row["defect_rate"] = sum(counts[d] for d in DEFECTS) / produced if produced else 0.0
    return row


def evaluate(path: Path, nlp) -> dict[str, dict[str, object]]:
    records = read_gold(path)
    rows: dict[str, dict[str, object]] = {}
    before = [r.label for r in records if r.generator == "before"]
    if before:
        rows["before"] = tally(before)
    keys = list(dict.fromkeys(r.key for r in records))
    current: dict[tuple[str, str, str], object] = {}
    current.update(regenerate_negcon(nlp, records))
    if any(r.type == "ner" for r in records):
        current.update(regenerate_ner(nlp, records))
    labels = []
    for key in keys:
        output = current.get(key)
        if output is not None and not isinstance(output, str):
            output = output.apply(key[2])  # a TextEdit
        labels.append("skipped" if output is None else lookup(records, key, output))
    rows["now"] = tally(labels)
    return rows


def render(results: dict[str, dict[str, dict[str, object]]]) -> str:
    lines = [
        "| set | generator | n | correct | meaning-odd | ungrammatical | wrong | skipped | unlabelled | **defects** |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, rows in results.items():
        for generator, row in rows.items():
            produced = row["n"] - row["skipped"]  # type: ignore[operator]
            cells = [f"{row[c]} ({row[c] / produced:.0%})" if c not in ("skipped", "unlabelled") and produced else str(row[c]) for c in COLUMNS]
            rate = row["defect_rate"]
            defects = "n/a (label the unlabelled)" if rate is None else f"**{rate:.1%}**"
            lines.append(f"| {name} | {generator} | {row['n']} | " + " | ".join(cells) + f" | {defects} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--types", nargs="*", default=None, help="only these needle types (default: every file)")
    parser.add_argument("--gold", type=Path, default=GOLD_DIR)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from engine.nlp import load_nlp, model_identity

    started = time.perf_counter()
    nlp = load_nlp()
    results = {}
    for path in sorted(args.gold.glob("*.jsonl")):
        if args.types and path.stem.split("_")[0] not in args.types:
            continue
        results[path.stem] = evaluate(path, nlp)
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        print(render(results))
        print(f"\n{model_identity(nlp)}; {platform.python_version()} on {platform.machine()}, "
              f"{time.perf_counter() - started:.0f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
