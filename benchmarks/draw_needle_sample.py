"""Prepare a corpus and draw needles and rand-hay windows for hand reading.

    python benchmarks/draw_needle_sample.py --corpus news --heldout exclude \\
        --docs 300 --n 30 --out news_tuning.jsonl
    python benchmarks/draw_needle_sample.py --corpus wiki --n 60 --out wiki.jsonl

The reading scheme is docs/needle_reading_protocol.md. What it does:

1. reads the corpus (`wiki`: the bundled sample, engine/data/wiki_sample.json;
   `news`, `sotu`: ../shared/data/{news_articles,sotu}.json, in the nearest
   ancestor folder that has one; or a path);
   `--heldout exclude` (the default) drops the ids of every set-aside part
   (tests/data/heldout/<corpus>.json and part<N>/<corpus>.json),
   `--heldout only --part N` keeps only part N's (the final read, once,
   after the merge; never for tuning);
2. `--docs N` keeps a seeded random N of those documents (`--docs-seed`), so a
   news or speech sample prepares in minutes on a shared machine;
3. prepares them with the default corpus settings (or the flags given) into
   `--store` (a temporary folder unless given; a store given again with the
   same input and settings is reused without parsing);
4. draws, per needle type (neg, con, ner), the first `--n` documents of the
   seeded document order `needlejudge pairs --seed S --position 0,0` uses
   whose pair passes the oracle, and `--n` rand-hay windows at (9,9) the same
   way (`needlejudge pairs --hay rand --position 9,9 --needle none`), each
   a distinct window: a window already drawn for another document is
   passed over (the experiment's own draw may repeat it).

`--min-sentences N --below-sentences M` prepare with a lower length floor
and draw needles only from documents with fewer than M sentences: a stratum
the default floor (30) never keeps, so no read of the default draws has seen
its needles; `--exclude-read-docs DIR` also drops, before preparing, every
document an earlier read names (a doc_id or hay_doc_id of DIR's label files).

Output, one JSON object a line: first {"kind": "summary"} with the
preparation's counts (retention = kept_screening / kept_length; grid_retention
= the documents a default experiment uses, whose needles of every type have
room for the whole (9, 9) grid in both hays, / kept_length), then one
{"kind": "needle"} per needle (the sentence in its document: up to
`--context` stored sentences before and 2 after), then one {"kind": "hay"}
per window (the window's sentences one by one, the needle sentence marked).
Every record has `label: ""` and `note: ""` for the reader to fill.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# ../shared/data beside the clone (as CI lays it out); for a git worktree
# further down (/work/wt/<name>), the nearest ancestor that has one
SHARED = next((p / "shared" / "data" for p in ROOT.parents if (p / "shared" / "data").is_dir()), ROOT.parent / "shared" / "data")
CORPORA = {"news": "news_articles", "sotu": "sotu"}
HELDOUT = ROOT / "tests" / "data" / "heldout"
NEEDLE_TYPES = ("neg", "con", "ner")
HAY_POSITION = (9, 9)


def corpus_records(corpus: str, heldout: str, part: int = 1) -> tuple[str, list[dict]]:
    """(name, records) of `corpus` after the held-out rule: every part excluded, or one part only."""
    if corpus == "wiki":
        from engine.corpus.prepare import BUNDLED_CORPUS

        path, name = BUNDLED_CORPUS, "wiki"
    elif corpus in CORPORA:
        name = CORPORA[corpus]
        path = SHARED / f"{name}.json"
    else:
        path = Path(corpus)
        name = path.stem
    records = json.loads(path.read_text(encoding="utf-8"))
    parts = held_out_parts(name)
    if heldout == "only":
        if part not in parts:
            raise SystemExit(f"--heldout only --part {part}: no held-out list of part {part} for corpus {corpus!r}")
        held = parts[part]
        return name, [r for r in records if str(r["id"]) in held]
    held = set().union(*parts.values())
    return name, [r for r in records if str(r["id"]) not in held]


def held_out_parts(name: str) -> dict[int, set[str]]:
    """Each set-aside part's ids: part 1 in tests/data/heldout/<name>.json, part N in part<N>/<name>.json."""
    listings = {1: HELDOUT / f"{name}.json"} | {
        int(folder.name.removeprefix("part")): folder / f"{name}.json" for folder in HELDOUT.glob("part*")
    }
    return {
        n: set(json.loads(path.read_text(encoding="utf-8"))["held_out_ids"])
        for n, path in listings.items() if path.is_file()
    }  # fmt: skip


def subsample(records: list[dict], docs: int | None, seed: int) -> list[dict]:
    if docs is None or docs >= len(records):
        return records
    ordered = sorted(records, key=lambda r: str(r["id"]))
    return random.Random(seed).sample(ordered, docs)


def needle_record(corpus, name: str, doc_id: str, needle: str, seed: int, context: int) -> dict | None:
    pair = corpus.make_pair(doc_id, needle, "orig", 0, 0, seed)
    if pair is None:
        return None
    document = corpus.document(doc_id)
    k = corpus.needle_sentence(doc_id, needle, seed)[0]
    edit = corpus.needle_edit(doc_id, needle, seed)
    return {
        "kind": "needle", "corpus": name, "type": needle, "doc_id": doc_id, "title": document.title,
        "sentence": k, "n_sentences": len(document.sentences),
        "mean_sentence_chars": round(sum(map(len, document.sentences)) / len(document.sentences), 1),
        "before_context": list(document.sentences[max(0, k - context) : k]),
        "needle_before": pair.needle_before, "needle_after": pair.needle_after,
        "edit": None if edit is None else {"rule": edit.rule, "start": edit.start, "end": edit.end,
                                           "before": edit.before, "after": edit.after},
        "after_context": list(document.sentences[k + 1 : k + 3]),
        "label": "", "note": "",
    }  # fmt: skip


def hay_record(corpus, name: str, doc_id: str, seed: int) -> dict | None:
    i, j = HAY_POSITION
    pair = corpus.make_pair(doc_id, "none", "rand", i, j, seed)
    if pair is None:
        return None
    donor = corpus.document(pair.hay_doc_id)
    m = corpus.rand_hay_window(doc_id, seed, i, j)[1]  # the donor's window center (engine.corpus.pairs)
    window = list(donor.sentences[m - i : m]) + [f">>> {pair.needle_before}"] + list(donor.sentences[m + 1 : m + j + 1])
    return {
        "kind": "hay", "corpus": name, "doc_id": doc_id, "hay_doc_id": pair.hay_doc_id, "center": m, "i": i, "j": j,
        "sentences": window, "label": "", "note": "",
    }  # fmt: skip


def draw(corpus, name: str, n: int, seed: int, context: int, below_sentences: int | None = None) -> list[dict]:
    from engine.corpus.pairs import document_order

    out: list[dict] = []
    for needle in NEEDLE_TYPES:
        drawn = 0
        for doc_id in document_order(corpus.doc_ids, seed, 0, 0):
            if drawn >= n:
                break
            if below_sentences is not None and len(corpus.document(doc_id).sentences) >= below_sentences:
                continue
            record = needle_record(corpus, name, doc_id, needle, seed, context)
            if record is not None:
                out.append(record)
                drawn += 1
    return out + ([] if below_sentences is not None else hay_records(corpus, name, n, seed))


def read_doc_ids(folder: Path) -> set[str]:
    """Every document a label file under `folder` names (doc_id, hay_doc_id)."""
    ids: set[str] = set()
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            ids.update(str(record[k]) for k in ("doc_id", "hay_doc_id") if isinstance(record, dict) and record.get(k))
    return ids


def hay_records(corpus, name: str, n: int, seed: int) -> list[dict]:  # type: ignore[no-untyped-def]
    """The first `n` distinct rand-hay windows in the seeded document order
    the experiment uses. The experiment may give several documents the same
    window (a donor's clean center does not depend on who borrows it), but a
    read sample counts each window once: a repeat is passed over."""
    from engine.corpus.pairs import document_order

    out: list[dict] = []
    seen: set[tuple[str, int]] = set()
    for doc_id in document_order(corpus.doc_ids, seed, *HAY_POSITION):
        if len(out) >= n:
            break
        record = hay_record(corpus, name, doc_id, seed)
        if record is not None and (record["hay_doc_id"], record["center"]) not in seen:
            seen.add((record["hay_doc_id"], record["center"]))
            out.append(record)
    return out


def main() -> int:
    from engine.corpus.prepare import CorpusSettings

    defaults = CorpusSettings()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="wiki", help="wiki, news, sotu, or a JSON array file")
    parser.add_argument("--heldout", choices=("exclude", "only"), default="exclude")
    parser.add_argument("--part", type=int, default=1, help="with --heldout only: which set-aside part")
    parser.add_argument("--docs", type=int, default=None, help="a seeded random sample of this many documents")
    parser.add_argument("--docs-seed", type=int, default=27)
    parser.add_argument("--n", type=int, default=30, help="needles per type, and rand-hay windows")
    parser.add_argument("--seed", type=int, default=0, help="experiment seed (needlejudge pairs --seed)")
    parser.add_argument("--context", type=int, default=3, help="stored sentences shown before a needle")
    parser.add_argument("--model", default=defaults.model)
    parser.add_argument("--min-chars-per-sentence", type=float, default=defaults.min_chars_per_sentence)
    parser.add_argument("--min-sentences", type=int, default=defaults.min_sentences)
    parser.add_argument("--below-sentences", type=int, default=None,
                        help="draw needles only from documents with fewer sentences (no hay windows)")
    parser.add_argument("--exclude-read-docs", type=Path, default=None,
                        help="drop the documents the label files in this folder name")
    parser.add_argument("--store", type=Path, default=None, help="store folder to prepare into / reuse")
    parser.add_argument("--out", type=Path, default=None, help="JSONL output (default: stdout)")
    args = parser.parse_args()

    from engine.corpus.pairs import Corpus
    from engine.corpus.prepare import EmptyCorpusError, prepare_corpus
    from engine.cache.store import Store

    name, records = corpus_records(args.corpus, args.heldout, args.part)
    if args.exclude_read_docs is not None:
        read = read_doc_ids(args.exclude_read_docs)
        records = [r for r in records if str(r.get("id")) not in read]
    records = subsample(records, args.docs, args.docs_seed)
    settings = CorpusSettings(
        model=args.model, min_chars_per_sentence=args.min_chars_per_sentence, min_sentences=args.min_sentences
    )
    with tempfile.TemporaryDirectory() as tmp:
        store_dir = args.store or Path(tmp) / "store"
        source = Path(tmp) / f"{name}.json"
        source.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
        with Store(store_dir) as store:
            try:
                summary = prepare_corpus([source], store, settings)
            except EmptyCorpusError as exc:  # the documents are the user's corpus, not the temporary copy
                print(f"draw_needle_sample: --corpus {args.corpus}: {str(exc).replace(f'{source}: ', '', 1)}", file=sys.stderr)
                return 2
            corpus = Corpus.open(store)
            drawn = draw(corpus, name, args.n, args.seed, args.context, args.below_sentences)
            serving = grid_documents(corpus, args.seed)
    head = {
        "kind": "summary", "corpus": name, "heldout": args.heldout, "part": args.part, "documents": len(records),
        "read": summary.read, "kept_length": summary.kept_length, "kept_screening": summary.kept_screening,
        "retention": round(summary.screening_rate, 4),
        # the documents a default experiment (k = 9, both hays, cell_documents = "balanced") draws from
        "grid_documents": serving, "grid_retention": round(serving / max(1, summary.kept_length), 4),
        "drops": summary.drops, "model": summary.model,
        "settings": {"min_chars_per_sentence": settings.min_chars_per_sentence, "model": settings.model},
        "seed": args.seed, "docs_seed": args.docs_seed, "seconds": round(summary.seconds, 1),
    }  # fmt: skip
    lines = [json.dumps(r, ensure_ascii=False) for r in [head, *drawn]]
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    counts = {t: sum(1 for r in drawn if r.get("type") == t) for t in NEEDLE_TYPES}
    counts["hay"] = sum(1 for r in drawn if r["kind"] == "hay")
    print(f"{name}: kept {summary.kept_screening}/{summary.kept_length} length-kept ({summary.screening_rate:.1%}), "
          f"{serving} serve every cell of the (9, 9) grid ({serving / max(1, summary.kept_length):.1%}), drops {summary.drops}; drew {counts}", file=sys.stderr)  # fmt: skip
    return 0


def grid_documents(corpus, seed: int) -> int:  # type: ignore[no-untyped-def]
    """How many documents serve every cell of the default design (engine.run.document_set)."""
    from engine.config import ExperimentConfig, JudgeConfig
    from engine.contracts import ConfigError
    from engine.run.document_set import document_set

    design = ExperimentConfig(store="", output="", seed=seed, judges=(JudgeConfig(name="any", adapter="baseline", model="jaccard"),))
    try:
        return document_set(design, corpus)[1].serve_every_cell
    except ConfigError:  # none serves every cell
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
