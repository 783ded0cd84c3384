"""Draw a fresh ner sample from the bundled Wikipedia sample, reproducibly.

The procedure of ner_fresh2 (RUBRIC.md), written down so anyone can redraw a
set: the bundled-sample articles that no set in tests/data/needle_gold uses
(any type, any file, except those named by --keep-sets), at least
--min-chars characters after cleaning, sorted by id and shuffled with
`random.Random(seed)`; each is parsed whole by --model, and an article with at
least 8 stored sentences gives the ner needle `needlejudge pairs --seed 1`
would make (the scan from the middle outwards, radius --radius), until --n
articles have given one. One JSON line per needle, in the gold set's record
format with `label: ""` for the reader to fill (RUBRIC.md); a final line
`{"tried": [...ids...]}` lists every article tried, in order.

    # ner_fresh3 (issue 14, ner-agree): drawn with the agreement setting
    # (--keep-sets: a redraw may use the articles of the fresh3 files themselves),
    python benchmarks/draw_ner_sample.py --model en_core_web_sm+en_core_web_md \\
        --min-chars 1000 --seed 16 --n 64 --generator agree \\
        --keep-sets ner_fresh3_agree ner_fresh3_sm ner_fresh3_md > fresh3_agree.jsonl
    # then exactly the articles it tried, with each single model:
    python benchmarks/draw_ner_sample.py --model en_core_web_sm --articles fresh3_agree.jsonl --generator after
    python benchmarks/draw_ner_sample.py --model en_core_web_md --articles fresh3_agree.jsonl --generator md
    # ner_fresh2 again (reproduces tests/data/needle_gold/ner_fresh2.jsonl's needles):
    python benchmarks/draw_ner_sample.py --model en_core_web_sm --min-chars 1500 --seed 15 --n 64 \\
        --keep-sets ner_fresh2 ner_fresh2_md ner_fresh3_agree ner_fresh3_sm ner_fresh3_md
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.corpus.needle_gold import GOLD_DIR, GoldRecord, read_gold, seeded_ner_output, to_json_line  # noqa: E402

MIN_SENTENCES = 8


def used_ids(gold: Path, keep_sets: set[str]) -> set[str]:
    return {r.doc_id for path in sorted(gold.glob("*.jsonl")) if path.stem not in keep_sets for r in read_gold(path)}


def candidate_ids(raw: dict[str, dict], used: set[str], min_chars: int, seed: int) -> list[str]:
    from engine.corpus.cleaning import clean_text

    ids = sorted(i for i, d in raw.items() if i not in used and len(clean_text(d["text"], d["title"])) >= min_chars)
    random.Random(seed).shuffle(ids)
    return ids


def draw(nlp, raw: dict[str, dict], ids: list[str], n: int | None, radius: int, generator: str):
    """(records, tried): the needle of each article in `ids` order until `n` are made (None: all)."""
    from engine.corpus.cleaning import clean_text
    from engine.needles.entities import document_entity_texts, entity_options
    from engine.needles.edits import find_needle_sentence
    from engine.corpus.segmentation import document_sentences

    records: list[GoldRecord] = []
    tried: list[str] = []
    texts = ((clean_text(raw[i]["text"], raw[i]["title"]), i) for i in ids)
    for doc, doc_id in nlp.pipe(texts, as_tuples=True, batch_size=8):
        if n is not None and len(records) >= n:
            break
        tried.append(doc_id)
        sentences = document_sentences(doc)
        if len(sentences.spans) < MIN_SENTENCES:
            continue
        entities = document_entity_texts(doc)
        found = find_needle_sentence(sentences.spans, len(sentences.spans) // 2, radius, lambda s: entity_options(s, entities))
        if found is None:
            continue
        sentence = sentences.texts[found[0]]
        output = seeded_ner_output(sentence, found[1], doc_id)
        start = next(k for k in range(len(sentence)) if sentence[k] != output[k])
        option = next(o for o in found[1] if o.start <= start <= o.end)
        after = output[option.start : len(output) - (len(sentence) - option.end)]
        records.append(
            GoldRecord(
                type="ner", doc_id=doc_id, sentence=sentence, perturbed=output, span_before=option.text,
                span_after=after, rule=f"ner:{option.label}", label="", generator=generator, start=option.start,
            )
        )  # fmt: skip
    return records, tried


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="en_core_web_sm")
    parser.add_argument("--min-chars", type=int, default=1000, help="characters after cleaning (ner_fresh2: 1500)")
    parser.add_argument("--seed", type=int, default=16, help="shuffle seed (ner_fresh2: 15, ner_fresh3: 16)")
    parser.add_argument("--n", type=int, default=64, help="needles to make")
    parser.add_argument("--radius", type=int, default=10, help="ner scan radius")
    parser.add_argument("--generator", default="after", help="the records' generator field (RUBRIC.md)")
    parser.add_argument("--keep-sets", nargs="*", default=[], help="gold sets whose articles may be drawn")
    parser.add_argument("--articles", type=Path, help="a previous draw's output: try exactly its articles, in order")
    args = parser.parse_args()
    from engine.corpus.nlp import load_nlp
    from engine.corpus.prepare import BUNDLED_CORPUS

    raw = {d["id"]: d for d in json.loads(BUNDLED_CORPUS.read_text(encoding="utf-8"))}
    if args.articles:
        ids = json.loads(args.articles.read_text(encoding="utf-8").splitlines()[-1])["tried"]
        n = None
    else:
        ids = candidate_ids(raw, used_ids(GOLD_DIR, set(args.keep_sets)), args.min_chars, args.seed)
        n = args.n
    print(f"{len(ids)} candidate articles", file=sys.stderr)
    records, tried = draw(load_nlp(args.model), raw, ids, n, args.radius, args.generator)
    for record in records:
        print(to_json_line(record))
    print(json.dumps({"tried": tried}))
    print(f"{len(records)} needles from {len(tried)} articles tried", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
