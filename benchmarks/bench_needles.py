"""Needle validity against the hand-labelled gold set (tests/data/needle_gold).

For every *.jsonl file of the gold set, each distinct needle sentence is
regenerated with the CURRENT generator (re-parsed with the real spaCy model:
neg/con after their paragraph context, so an open quotation is seen; ner in
its whole document from the bundled sample, with the seeded pick of
`needlejudge pairs` at seed 1, the seed it was labelled with:
engine.corpus.needle_gold.regenerate_ner, the same derivation the tests use), and
the label given to that exact output is looked up (RUBRIC.md). An output nobody labelled is "unlabelled" and the
defect rate of its set is not reported until it is labelled.

Printed per set: the stored labels of the generator at the start of issue 14
("before", where the set has them) and the current generator ("now").
Defect rate = (ungrammatical + wrong) / needles produced (skipped and "not
found" excluded).

    python benchmarks/bench_needles.py [--types neg con] [--model en_core_web_md | en_core_web_sm+en_core_web_md] [--json]

`--model` regenerates with another spaCy model setting (engine.corpus.nlp.load_nlp
names; "en_core_web_sm+en_core_web_md" for two-model agreement); outputs it
makes that no one labelled show as "unlabelled". A set whose name ends in
`_md`, `_sm` or `_agree` was drawn with that setting (engine.corpus.needle_gold.DRAWN_WITH)
and is evaluated only with it. benchmarks/draw_ner_sample.py draws such sets.
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

from engine.corpus.needle_gold import DEFECTS, GOLD_DIR, NOT_FOUND, drawn_with, lookup, read_gold, regenerate_negcon, regenerate_ner  # noqa: E402

# "not found": the sentence is not one of its document's under this model's parse (RUBRIC.md)
COLUMNS = ("correct", "meaning-odd", "ungrammatical", "wrong", "skipped", "not found", "unlabelled")
UNCOUNTED = ("skipped", "not found")


def tally(labels: list[str]) -> dict[str, object]:
    counts = Counter(labels)
    produced = len(labels) - sum(counts[c] for c in UNCOUNTED)
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
        labels.append("skipped" if output is None else "not found" if output == NOT_FOUND else lookup(records, key, output))
    rows["now"] = tally(labels)
    return rows


def render(results: dict[str, dict[str, dict[str, object]]]) -> str:
    lines = [
        "| set | generator | n | correct | meaning-odd | ungrammatical | wrong | skipped | not found | unlabelled | **defects** |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, rows in results.items():
        for generator, row in rows.items():
            produced = row["n"] - sum(row[c] for c in UNCOUNTED)  # type: ignore[operator]
            cells = [f"{row[c]} ({row[c] / produced:.0%})" if c not in UNCOUNTED + ("unlabelled",) and produced else str(row[c]) for c in COLUMNS]
            rate = row["defect_rate"]
            defects = "n/a (label the unlabelled)" if rate is None else f"**{rate:.1%}**"
            lines.append(f"| {name} | {generator} | {row['n']} | " + " | ".join(cells) + f" | {defects} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--types", nargs="*", default=None, help="only these needle types (default: every file)")
    parser.add_argument("--gold", type=Path, default=GOLD_DIR)
    parser.add_argument("--model", default="en_core_web_sm", help="spaCy model (default: en_core_web_sm)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from engine.corpus.nlp import load_nlp, model_identity

    started = time.perf_counter()
    nlp = load_nlp(args.model)
    results = {}
    for path in sorted(args.gold.glob("*.jsonl")):
        if args.types and path.stem.split("_")[0] not in args.types:
            continue
        if drawn_with(path) not in (None, args.model):
            continue  # a sample drawn with another model setting: only its outputs are labelled
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
