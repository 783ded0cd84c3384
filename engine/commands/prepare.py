"""`needlejudge prepare [INPUTS...] --store DIR`: read, clean, parse once, screen, store.

The inputs are checked before the store is created. A preparation that
fails (bad input found while reading, no document kept, an interrupt)
exits non-zero and removes the store folder only if this command created
it and it still holds nothing; a store that held data is never deleted.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import msgspec

HELP = "prepare a corpus (clean, parse once with spaCy, length-filter, screen for all needle types) into a store"


def configure(parser: argparse.ArgumentParser) -> None:
    from engine.corpus.prepare import CON_SHAPES, CorpusSettings

    d = CorpusSettings()
    parser.add_argument(
        "inputs", nargs="*", type=Path, metavar="INPUTS",
        help="JSON array / JSON Lines / WikiExtractor / .txt files or folders (default: the bundled Wikipedia sample)",
    )  # fmt: skip
    parser.add_argument("--store", type=Path, required=True, metavar="DIR", help="store folder (created if absent)")
    parser.add_argument("--min-sentences", type=int, default=d.min_sentences, help="minimum sentences per document")
    parser.add_argument(
        "--min-chars-per-sentence", type=float, default=d.min_chars_per_sentence,
        help="lower bound on the average sentence length in characters (paper: 150)",
    )  # fmt: skip
    parser.add_argument(
        "--max-chars-per-sentence", type=float, default=d.max_chars_per_sentence,
        help="upper bound on the average sentence length in characters (paper: 2000)",
    )  # fmt: skip
    parser.add_argument(
        "--model", default=d.model,
        help="spaCy model: en_core_web_sm+en_core_web_md (default: two-model agreement for ner; md is installed "
        "by scripts/quickstart, or by hand: README, Choosing the spaCy model), en_core_web_md, or "
        "en_core_web_sm (the paper's single model)",
    )  # fmt: skip
    parser.add_argument("--batch-size", type=int, default=d.batch_size, help="nlp.pipe batch size")
    parser.add_argument("--n-process", type=int, default=d.n_process, help="nlp.pipe worker processes")
    parser.add_argument("--scan-radius", type=int, default=d.scan_radius, help="sentences scanned above/below the middle for the neg and con needles (default: %(default)s; paper: 5)")
    parser.add_argument(
        "--ner-scan-radius", type=int, default=d.ner_scan_radius,
        help="sentences scanned above/below the middle for the ner needle (default: %(default)s, what the entity "
        "rules need to keep a needle in >= 90%% of length-kept documents of news, speeches and the bundled sample; "
        "paper: 5, as for neg/con)",
    )  # fmt: skip
    parser.add_argument(
        "--no-scan-beyond-radius", dest="scan_beyond_radius", action="store_false",
        help="stop each needle scan at its radius (the paper's scan); by default it goes on to the farther "
        "sentences that have room for a (9, 9) window",
    )  # fmt: skip
    parser.add_argument(
        "--con-shapes", choices=CON_SHAPES, default=d.con_shapes,
        help="con swaps only the coordinations whose shape holds on unseen text (safe: verbs and clauses, a "
        "verb's determined objects, predicative adjectives) or also the phrase-level ones (any: more documents "
        "keep a con needle, many more of those needles are wrong; README, Prepare a corpus)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--no-progress", action="store_true", help="no progress display")


def _remove_if_still_empty(path: Path, folder_existed: bool) -> None:
    """Remove what a failed preparation created at `path`, if it holds no entry."""
    from engine.cache.store import Store

    try:
        with Store(path) as store:
            if store.entries():
                return
    except Exception:  # not a store we can read: leave it alone
        return
    if not folder_existed:
        shutil.rmtree(path)
        return
    for child in path.iterdir():  # an empty folder given as the store: keep the folder
        if child.is_dir():
            shutil.rmtree(child)
        else:
            child.unlink()


def main(args: argparse.Namespace) -> int:
    from engine.corpus.reading import check_inputs
    from engine.corpus.prepare import BUNDLED_CORPUS, CorpusSettings, prepare_corpus
    from engine.cache.store import Store
    from engine.cache.store_check import check_store_path

    settings = CorpusSettings(
        min_sentences=args.min_sentences,
        min_chars_per_sentence=args.min_chars_per_sentence,
        max_chars_per_sentence=args.max_chars_per_sentence,
        model=args.model,
        batch_size=args.batch_size,
        n_process=args.n_process,
        scan_radius=args.scan_radius,
        ner_scan_radius=args.ner_scan_radius,
        scan_beyond_radius=args.scan_beyond_radius,
        con_shapes=args.con_shapes,
    )
    progress = not args.no_progress and not args.json and sys.stderr.isatty()
    settings.validate()
    check_inputs(list(args.inputs) or [BUNDLED_CORPUS])
    check_store_path(args.store)  # a file where the folder should be, a damaged data.mdb: before anything is created
    folder_existed = args.store.exists()
    created = not folder_existed or not any(args.store.iterdir())
    try:
        with Store(args.store) as store:
            summary = prepare_corpus(list(args.inputs), store, settings, progress=progress)
    except BaseException:
        if created:
            _remove_if_still_empty(args.store, folder_existed)
        raise
    if args.json:
        print(msgspec.json.encode(summary).decode())
        return 0
    state = "already prepared (nothing to do)" if summary.reused else f"prepared in {summary.seconds:.1f} s"
    print(f"corpus {state} with {summary.model}")
    print(f"  documents read:                   {summary.read}")
    print(f"  kept after cleaning + length:     {summary.kept_length}")
    print(f"  kept after screening:             {summary.kept_screening} ({100 * summary.screening_rate:.0f}% of length-kept)")
    for reason, count in summary.drops.items():
        print(f"  dropped, {reason + ':':<26}{count}")
    dropped = ", ".join(f"{n} {why}" for why, n in sorted(summary.non_sentences_dropped.items())) or "none"
    print(f"  sentences: {summary.fragments_merged} wordless fragments merged; not sentences, dropped: {dropped}; "
          f"{summary.boilerplate_cut} boilerplate pieces cut")  # fmt: skip
    return 0
