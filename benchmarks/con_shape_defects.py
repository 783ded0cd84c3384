"""Hand-read con needles by the shape of their coordination: which shapes the
allow-list (engine.needles.coordination_shape) keeps, and their defect rates.

    python benchmarks/con_shape_defects.py SAMPLE.jsonl LABELS.jsonl [SAMPLE2.jsonl LABELS2.jsonl ...]

SAMPLE: a draw_needle_sample.py output (re-drawn at the commit its labels were
read at: the needle must be the one that was read); LABELS: the read's label
file (benchmarks/reads/*_con.jsonl). Each needle sentence is parsed again
with the default models and its swapped conjunction classified by
shape_refusal ("kept" when the allow-list keeps it). Prints, per shape, the
needles read and the defects (U + W) with the one-sided 95% Clopper-Pearson
upper bound, then the defects the allow-list keeps.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(paths: list[str]) -> None:
    from scipy.stats import binomtest

    from engine.corpus.nlp import load_nlp
    from engine.needles.coordination_shape import shape_refusal

    if not paths or len(paths) % 2:
        raise SystemExit("expected pairs of SAMPLE.jsonl LABELS.jsonl")
    nlp = load_nlp("en_core_web_sm+en_core_web_md")
    counts: Counter = Counter()
    kept_defects = []
    for sample, labels in zip(paths[::2], paths[1::2]):
        label = {row["doc_id"]: row for row in map(json.loads, Path(labels).read_text().splitlines())}
        for record in map(json.loads, Path(sample).read_text().splitlines()):
            if record.get("kind") != "needle" or record["type"] != "con" or record["doc_id"] not in label:
                continue
            doc = nlp(record["needle_before"])
            conjunction = next(t for t in doc if t.idx == record["edit"]["start"])
            shape = shape_refusal(conjunction) or "kept"
            read = label[record["doc_id"]]
            defect = read["label"] in ("U", "W")
            counts[shape, "n"] += 1
            counts[shape, "defects"] += defect
            if defect and shape == "kept":
                kept_defects.append(f"{record['doc_id']}: {read['class']}")
    print(f"{'shape':28s} {'read':>5s} {'defects':>8s} {'upper 95%':>10s}")
    for shape in sorted({s for s, _ in counts}, key=lambda s: (s != "kept", s)):
        n, k = counts[shape, "n"], counts[shape, "defects"]
        upper = binomtest(k, n).proportion_ci(0.90, "exact").high
        print(f"{shape:28s} {n:5d} {k:8d} {upper:10.1%}")
    refused_n = sum(v for (s, what), v in counts.items() if s != "kept" and what == "n")
    refused_k = sum(v for (s, what), v in counts.items() if s != "kept" and what == "defects")
    print(f"{'refused, all shapes':28s} {refused_n:5d} {refused_k:8d}")
    for line in kept_defects:
        print("kept defect:", line)


if __name__ == "__main__":
    main(sys.argv[1:])
