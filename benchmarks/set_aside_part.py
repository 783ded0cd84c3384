"""Set aside a fresh held-out part of a corpus, stratified by the length filter, without showing any text.

    python benchmarks/set_aside_part.py --corpus news --part 3 --share 0.5 \\
        --read-in /work/notes --read-in . --read-in /tmp/bash_jobs.0 --listed-in /tmp

1. takes the corpus's tuning ids (every earlier part excluded: draw_needle_sample.corpus_records);
2. drops every id that someone saw (shown_ids: named anywhere under `--read-in`, or in a file under
   `--listed-in` that names few ids): those texts were seen one item at a time and are tuning text;
3. segments the rest as prepare does (cleaning, corpus boilerplate, the default models, document_sentences)
   and puts each document in one stratum: `default` (passes the default length filter), `floor100` (passes
   only at 100 characters a sentence, where hand-read draws look), `short` (neither);
4. samples `--share` of each stratum with random.Random(seed), so the part has documents that the default
   filter keeps (part 2's flaw: ids never shown were mostly short-sentence ones, and none of its news passed
   the default floor).

Writes tests/data/heldout/part<N>/<corpus>.json (ids and stratum counts only) and prints the counts. Nothing
of a document's text is printed: the part must stay unread until its one final read.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from draw_needle_sample import CORPORA, HELDOUT, corpus_records  # noqa: E402

ID_PATTERNS = {"news_articles": re.compile(r"\bnews-\d+\b"), "sotu": re.compile(r"\bsotu-\w+")}
TEXT_SUFFIXES = {".jsonl", ".json", ".md", ".txt", ".log", ".py", ".csv"}
OUTPUT_NAMES = {"stdout", "stderr"}  # the shell tool's saved command output: what a person saw
MAX_SCANNED_BYTES = 50_000_000
LISTING_SIZE = 40
FLOORS = (("default", 150.0), ("floor100", 100.0))


def shown_ids(read_in: list[Path], listed_in: list[Path], pattern: re.Pattern[str], ids: set[str]) -> set[str]:
    """The ids of `ids` that someone saw one at a time: every id named in a file under `read_in` (notes, hand
    reads, the repository, saved command output), and the ids of files under `listed_in` that name at most
    LISTING_SIZE of them (a larger file is a machine listing, a whole draw or a screen, not read item by item)."""
    shown: set[str] = set()
    for folders, whole in ((read_in, True), (listed_in, False)):
        for path in text_files(folders):
            try:
                named = set(pattern.findall(path.read_text(encoding="utf-8", errors="replace"))) & ids
            except OSError:
                continue
            if whole or len(named) <= LISTING_SIZE:
                shown |= named
    return shown


def text_files(folders: list[Path]):
    for folder in folders:
        paths = [folder] if folder.is_file() else folder.rglob("*")
        for path in paths:
            if (path.suffix in TEXT_SUFFIXES or path.name in OUTPUT_NAMES) and path.is_file():
                if path.stat().st_size <= MAX_SCANNED_BYTES:
                    yield path


def strata(records: list[dict], tuning: list[dict]) -> dict[str, str]:
    """doc id -> stratum, from the sentences prepare would store (boilerplate found over all `tuning` records)."""
    from engine.corpus.boilerplate import corpus_boilerplate, remove_pieces
    from engine.corpus.cleaning import clean_text
    from engine.corpus.nlp import load_nlp
    from engine.corpus.prepare import CorpusSettings
    from engine.corpus.segmentation import document_sentences

    settings = CorpusSettings()
    nlp = load_nlp(settings.model)
    boilerplate = corpus_boilerplate_of(tuning, corpus_boilerplate)
    out: dict[str, str] = {}
    texts = []
    for record in records:
        text = remove_pieces(clean_text(record["text"], record.get("title", "")), boilerplate)[0]
        if len(text) < settings.min_sentences * FLOORS[-1][1] or len(text) > getattr(nlp, "max_length", 1_000_000):
            out[str(record["id"])] = "short"
        else:
            texts.append((text, str(record["id"])))
    for doc, doc_id in nlp.pipe(texts, as_tuples=True, batch_size=16):
        lengths = [len(t) for t in document_sentences(doc).texts]
        average = sum(lengths) / len(lengths) if lengths else 0.0
        fits = len(lengths) >= settings.min_sentences and average <= settings.max_chars_per_sentence
        out[doc_id] = next((name for name, floor in FLOORS if fits and average >= floor), "short")
    return out


def corpus_boilerplate_of(records: list[dict], corpus_boilerplate) -> object:
    """The corpus-level boilerplate prepare removes, found over these records (a temporary JSON input)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "records.json"
        path.write_text(json.dumps(records), encoding="utf-8")
        return corpus_boilerplate([path])


def stratum_shares(given: list[str]) -> dict[str, float]:
    shares = {}
    for item in given:
        stratum, _, share = item.partition("=")
        if stratum not in ("default", "floor100", "short") or not share:
            raise SystemExit(f"--stratum-share {item!r}: expected default=X, floor100=X or short=X")
        shares[stratum] = float(share)
    return shares


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=sorted(CORPORA), required=True)
    parser.add_argument("--part", type=int, required=True)
    parser.add_argument("--share", type=float, required=True, help="share of each stratum's unshown ids to set aside")
    parser.add_argument("--stratum-share", action="append", default=[], metavar="STRATUM=SHARE", help="another share for one stratum")
    parser.add_argument("--read-in", type=Path, action="append", default=[], help="folder whose every named id was seen")
    parser.add_argument("--listed-in", type=Path, action="append", default=[], help=f"folder whose files naming <= {LISTING_SIZE} ids were seen")
    parser.add_argument("--dry-run", action="store_true", help="print the strata's counts, write nothing")
    parser.add_argument("--seed", help="default: needlejudge-heldout-part<N>-<corpus>")
    args = parser.parse_args(argv)

    name, records = corpus_records(args.corpus, "exclude")
    target = HELDOUT / f"part{args.part}" / f"{name}.json"
    if target.exists():
        raise SystemExit(f"{target} exists: a part is set aside once")
    shown = shown_ids(args.read_in, args.listed_in, ID_PATTERNS[name], {str(r["id"]) for r in records})
    unshown = [r for r in records if str(r["id"]) not in shown]
    by_id = strata(unshown, records)
    seed = args.seed or f"needlejudge-heldout-part{args.part}-{name}"
    rng = random.Random(seed)
    held: list[str] = []
    counts: dict[str, dict[str, int]] = {}
    shares = {"default": args.share, "floor100": args.share, "short": args.share} | stratum_shares(args.stratum_share)
    for stratum, share in shares.items():
        ids = sorted(i for i, s in by_id.items() if s == stratum)
        chosen = sorted(rng.sample(ids, round(len(ids) * share)))
        held += chosen
        counts[stratum] = {"unshown": len(ids), "share": share, "held_out": len(chosen)}
    if args.dry_run:
        print(json.dumps({"shown_before": len(shown), "strata": counts}))
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    listing = {
        "corpus": f"../shared/data/{name}.json", "part": args.part, "seed": seed,
        "tuning_ids": len(records), "shown_before": len(shown), "strata": counts, "held_out_ids": sorted(held),
    }  # fmt: skip
    target.write_text(json.dumps(listing, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in listing.items() if k != "held_out_ids"} | {"held_out": len(held)}))


if __name__ == "__main__":
    main()
