"""`needlejudge pairs --store DIR ...`: print verified pairs as JSON Lines.

Each line is the pair plus `edit`, the audit trail of its needle sentence:
{"rule", "label", "start", "end", "before", "after"}: `before` at start:end
of needle_before became `after` (which starts at `start` in needle_after),
by `rule` (neg:copula, neg:aux, neg:do-support, con:and->or, con:or->and,
ner:<LABEL>); null for the none needle and controls. `--audit` prints the
same as one readable line per pair instead.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from engine.contracts import HAYS, NEEDLES, ConfigError

if TYPE_CHECKING:
    from engine.needles.edits import TextEdit

HELP = "print needle/hay document pairs of one position as JSON Lines (oracle-verified)"


def _position(text: str) -> tuple[int, int]:
    try:
        i, j = (int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--position {text!r}: expected I,J with two integers, e.g. 3,5") from None
    if i < 0 or j < 0:
        raise argparse.ArgumentTypeError(f"--position {text!r}: expected I,J >= 0")
    return i, j


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", required=True, metavar="DIR", help="store prepared with `needlejudge prepare`")
    parser.add_argument("--needle", choices=NEEDLES, default="neg")
    parser.add_argument("--hay", choices=HAYS, default="orig")
    parser.add_argument("--position", type=_position, default=(0, 0), metavar="I,J", help="sentences before,after the needle")
    parser.add_argument("--limit", type=int, default=10, help="number of pairs (in the position's document order)")
    parser.add_argument("--seed", type=int, default=0, help="experiment seed")
    parser.add_argument("--control", choices=("null_edit", "negative"), default=None, help="print control items instead")
    parser.add_argument("--audit", action="store_true", help="one readable line per pair: doc, rule and the edit in context")


def main(args: argparse.Namespace) -> int:
    import msgspec

    from engine.corpus.pairs import Corpus, document_order
    from engine.cache.store import Store

    if args.limit < 0:
        raise ConfigError(f"--limit {args.limit}: expected >= 0")
    i, j = args.position
    if not (Path(args.store) / "data.mdb").exists():
        raise ConfigError(f"--store {args.store}: no store here; run `needlejudge prepare --store {args.store}` first")
    with Store(args.store, readonly=True) as store:
        corpus = Corpus.open(store)
        encoder = msgspec.json.Encoder()
        out = sys.stdout.buffer
        emitted = skipped = 0
        for doc_id in document_order(corpus.doc_ids, args.seed, i, j):
            if emitted >= args.limit:
                break
            if args.control:
                pair = corpus.make_control(doc_id, args.control, i, j, args.seed)
            else:
                pair = corpus.make_pair(doc_id, args.needle, args.hay, i, j, args.seed)
            if pair is None:
                skipped += 1
                continue
            edit = None if args.control else corpus.needle_edit(doc_id, args.needle, args.seed)
            if args.audit:
                out.write(audit_line(pair.doc_id, pair.needle_before, edit).encode("utf-8") + b"\n")
            else:
                out.write(encoder.encode({**msgspec.structs.asdict(pair), "edit": edit_fields(edit)}) + b"\n")
            emitted += 1
        out.flush()
    if corpus.oracle_failures or skipped:
        print(f"pairs: {emitted} emitted, {skipped} skipped, {corpus.oracle_failures} failed the oracle "
              f"{corpus.oracle_failure_reasons}", file=sys.stderr)  # fmt: skip
    return 0



def edit_fields(edit: TextEdit | None) -> dict[str, object] | None:
    if edit is None:
        return None
    return {"rule": edit.rule, "label": edit.label, "start": edit.start, "end": edit.end, "before": edit.before, "after": edit.after}


def audit_line(doc_id: str, sentence: str, edit: TextEdit | None, width: int = 60) -> str:
    """`doc_id  rule  start:end  …left [before → after] right…` with up to `width` characters of context a side."""
    if edit is None:
        return f"{doc_id}\tnone\t-\t{sentence}"
    left = sentence[max(0, edit.start - width) : edit.start]
    right = sentence[edit.end : edit.end + width]
    left = ("…" if edit.start > width else "") + left
    right = right + ("…" if edit.end + width < len(sentence) else "")
    return f"{doc_id}\t{edit.rule}\t{edit.start}:{edit.end}\t{left}[{edit.before} → {edit.after}]{right}"
