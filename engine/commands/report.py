"""`needlejudge report RUN_DIR`: analyse a finished run folder and write the report."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from engine.contracts import ConfigError

HELP = "analyse a run folder (results.jsonl + manifest.json) and write the HTML/Markdown report, figures and CSV tables"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="run folder holding results.jsonl (and manifest.json)")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: RUN_DIR/report)")
    parser.add_argument(
        "--labels", type=Path, default=None,
        help="human labels, CSV or JSONL with doc_id, needle, hay, i, j, label (0–100) [, replicate]",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and permutation resampling")
    parser.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples per confidence interval")
    parser.add_argument("--permutations", type=int, default=1000, help="label permutations per EMD null")
    parser.add_argument("--force", action="store_true", help="rebuild even when the report's inputs have not changed")


def main(args: argparse.Namespace) -> int:
    from analysis.options import AnalysisOptions
    from analysis.report import build_report

    for name in ("bootstrap", "permutations"):
        if getattr(args, name) < 100:
            raise ConfigError(f"--{name} {getattr(args, name)}: expected at least 100 resamples")
    options = AnalysisOptions(seed=args.seed, n_bootstrap=args.bootstrap, n_permutations=args.permutations)
    out = args.out if args.out is not None else args.run_dir / "report"
    started = time.perf_counter()
    paths = build_report(
        args.run_dir, out, labels=args.labels, options=options, force=args.force,
        progress=lambda step: print(f"  {step}…", file=sys.stderr),
    )  # fmt: skip
    if paths.reused:
        print(f"report up to date, reused: results, labels, options and report code unchanged ({time.perf_counter() - started:.1f} s; --force rebuilds)")
    else:
        print(f"report written in {time.perf_counter() - started:.1f} s")
    print(f"  HTML:     {paths.html}")
    print(f"  summary:  {paths.markdown}")
    print(f"  figures:  {paths.figures_dir} ({len(paths.figures)} files)")
    print(f"  tables:   {paths.tables_dir} ({len(paths.tables)} CSV files)")
    return 0
