"""`needlejudge label RUN_DIR`: a local page on which people rate a sample of a run's pairs."""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.contracts import ConfigError

HELP = "serve a page on 127.0.0.1 for people to label a stratified sample of a finished run's pairs"
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="finished run folder (results.jsonl + manifest.json)")
    parser.add_argument("--out", type=Path, default=None, help="where the sample and labels.jsonl live (default: RUN_DIR/labels)")
    parser.add_argument("--size", type=int, default=200, help="items in the sample (drawn once; default 200)")
    parser.add_argument("--overlap", type=int, default=40, help="items every labeller rates, for the people-people ceiling (default 40)")
    parser.add_argument("--prompt", default=None, help="prompt whose scale and wording the page shows (default: the run's first)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; another one needs --token)")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--token", default=None, help="a secret every API call must carry; required to bind beyond this machine")
    parser.add_argument("--export", type=Path, default=None, metavar="FILE", help="write the labels to FILE (.jsonl or .parquet) and exit")
    parser.add_argument("--import", dest="import_", type=Path, default=None, metavar="FILE",
                        help="add the labels of FILE (.jsonl or .parquet, items of this sample) and exit")


def main(args: argparse.Namespace) -> int:
    if args.host not in LOCAL_HOSTS and not args.token:
        raise ConfigError(f"--host {args.host}: binding beyond this machine needs --token (a secret the page's address will carry)")
    if args.size < 1 or not 0 <= args.overlap <= args.size:
        raise ConfigError(f"--size {args.size} --overlap {args.overlap}: expected size >= 1 and 0 <= overlap <= size")
    from aiohttp import web

    from engine.labelling.from_run import open_book
    from engine.labelling.server import create_app

    out = args.out if args.out is not None else args.run_dir / "labels"
    book = open_book(args.run_dir, out, size=args.size, overlap=args.overlap, prompt=args.prompt)
    if args.export is not None or args.import_ is not None:
        from engine.labelling.transfer import export_labels, import_labels

        if args.import_ is not None:
            added = import_labels(book.log, args.import_, [s.item for s in book.items])
            print(f"imported {added} label(s) from {args.import_} into {book.log.path}")
        if args.export is not None:
            print(f"exported {export_labels(book.log, args.export)} label(s) to {args.export}")
        return 0
    query = f"/?token={args.token}" if args.token else "/"
    print(f"labelling {len(book.items)} items of {args.run_dir} ({sum(s.item.overlap for s in book.items)} shown to every labeller)")
    print(f"  open http://{args.host}:{args.port}{query}   labels: {book.log.path}   Ctrl-C stops (every label is already saved)", flush=True)
    web.run_app(create_app(book, token=args.token), host=args.host, port=args.port, print=None, handle_signals=True)
    return 0
