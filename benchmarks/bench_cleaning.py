"""Measure what cleaning and sentence splitting leave in a prepared store.

    needlejudge prepare --store S --min-chars-per-sentence 100 --json > S.json
    python benchmarks/bench_cleaning.py --store S [--k 9]

Reads the store only (no parsing), so a store prepared by an older version
of the code is measured by the same rules as a new one. Prints:

- documents read / kept by length / kept by screening (the stored summary);
- wordless sentences: stored sentences without a letter or digit
  (a split-off closing quote, a lone ":"), as a share of stored sentences;
- (k, k) windows holding one: for every stored document and needle type
  (none, neg, con, ner) the orig-hay window of k sentences above and below
  the needle sentence, and the rand-hay window (the donor's k sentences
  above and below its middle, engine.corpus.pairs), where the document is long enough;
- template holes (engine.corpus.cleaning.template_hole) in stored sentences,
  in needle sentences and in windows.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.corpus.cleaning import template_hole  # noqa: E402
from engine.corpus.pairs import Corpus  # noqa: E402
from engine.corpus.prepare import stored_summary  # noqa: E402
from engine.cache.store import Store  # noqa: E402

WORD = re.compile(r"[^\W_]")
NEEDLES = ("none", "neg", "con", "ner")


def wordless(sentence: str) -> bool:
    return WORD.search(sentence) is None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--k", type=int, default=9, help="sentences above and below the needle (the (k, k) window)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the rand-hay donor choice")
    parser.add_argument("--show", type=int, default=5, help="print up to this many examples of each defect")
    args = parser.parse_args()
    k = args.k
    with Store(args.store, readonly=True) as store:
        summary = stored_summary(store)
        assert summary is not None, f"{args.store}: no prepared corpus"
        corpus = Corpus.open(store)
        sentences = empty = holes = 0
        windows = {"orig": [0, 0, 0], "rand": [0, 0, 0]}  # fitting, with a wordless sentence, with a hole
        needle_sentences = needle_holes = 0
        shown: dict[str, list[str]] = {"wordless": [], "hole": [], "needle hole": []}

        def note(kind: str, text: str) -> None:
            if len(shown[kind]) < args.show:
                shown[kind].append(text)

        for doc_id in corpus.doc_ids:
            document = corpus.document(doc_id)
            for text in document.sentences:
                sentences += 1
                if wordless(text):
                    empty += 1
                    note("wordless", f"{doc_id}: {text!r}")
                if template_hole(text):
                    holes += 1
                    note("hole", f"{doc_id}: {template_hole(text)}: {text!r}")
            n = len(document.sentences)
            chosen = corpus.rand_hay_window(doc_id, args.seed, k, k)  # (donor, its window's center)
            donor = corpus.document(chosen[0] if chosen else doc_id)
            donor_center = chosen[1] if chosen else donor.middle
            for needle in NEEDLES:
                center, before, _ = corpus.needle_sentence(doc_id, needle, args.seed)
                if needle != "none":
                    needle_sentences += 1
                    if template_hole(before):
                        needle_holes += 1
                        note("needle hole", f"{doc_id} {needle}: {before!r}")
                spans = {
                    "orig": document.sentences[center - k : center + k + 1] if center - k >= 0 and center + k < n else None,
                    "rand": (
                        donor.sentences[donor_center - k : donor_center] + (before,) + donor.sentences[donor_center + 1 : donor_center + k + 1]
                        if donor_center - k >= 0 and donor_center + k < len(donor.sentences)
                        else None
                    ),
                }
                for hay, window in spans.items():
                    if window is None:
                        continue
                    counts = windows[hay]
                    counts[0] += 1
                    counts[1] += any(map(wordless, window))
                    counts[2] += any(template_hole(s) is not None for s in window)
    print(f"store {args.store}; model {summary.model}; floor {summary.settings.min_chars_per_sentence:g}")
    print(
        f"documents read {summary.read}, kept by length {summary.kept_length}, kept by screening "
        f"{summary.kept_screening} ({100 * summary.screening_rate:.1f}% of length-kept); drops {summary.drops}"
    )
    print(f"stored sentences {sentences}: wordless {empty} ({100 * empty / max(sentences, 1):.2f}%), "
          f"with a template hole {holes} ({100 * holes / max(sentences, 1):.2f}%)")  # fmt: skip
    print(f"needle sentences (neg, con, ner) {needle_sentences}: with a template hole {needle_holes}")
    for hay, (fitting, with_empty, with_hole) in windows.items():
        print(
            f"({k},{k}) {hay}-hay windows {fitting}: with a wordless sentence {with_empty} "
            f"({100 * with_empty / max(fitting, 1):.1f}%), with a template hole {with_hole} ({100 * with_hole / max(fitting, 1):.1f}%)"
        )
    for kind, examples in shown.items():
        for example in examples:
            print(f"  {kind}: {example}")


if __name__ == "__main__":
    main()
