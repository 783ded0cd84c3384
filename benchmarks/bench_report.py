"""The report of a quickstart-sized run: how long `needlejudge report` takes.

    python benchmarks/bench_report.py [--judges 3] [--size 10] [--docs 8] [--bootstrap 2000] [--permutations 1000]

Builds a synthetic run folder (analysis.synthetic: planted effects, order
swaps, controls) with judges × 4 needles × 2 hays × size² position cells ×
docs documents (~20k rows by default: the quickstart's scale), then times,
in one process:

- baseline: `load_run` (read and decode results.jsonl into columns), the
  least any analysis must do;
- the analyses without figures (statistics, resampling, checks);
- the whole report (`build_report`: analyses, figures, HTML, CSV, Markdown).

Wall and CPU (process) seconds are both printed: on a shared machine the
wall time carries other people's load, CPU time much less so. Ratios are
against the baseline measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

from analysis.load import load_run
from analysis.options import AnalysisOptions
from analysis.report import analyse, build_report
from analysis.synthetic import SyntheticJudge, reference_judges, synthetic_rows, write_run


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judges", type=int, default=3)
    parser.add_argument("--size", type=int, default=10, help="positions 0..size-1 on each axis")
    parser.add_argument("--docs", type=int, default=8, help="documents per cell")
    parser.add_argument("--bootstrap", type=int, default=2000)
    parser.add_argument("--permutations", type=int, default=1000)
    args = parser.parse_args()

    judges = (reference_judges() + [SyntheticJudge(name=f"extra{n}") for n in range(max(0, args.judges - 2))])[: args.judges]
    rows = synthetic_rows(judges, size=args.size, docs_per_cell=args.docs, swapped_docs=1)
    options = AnalysisOptions(n_bootstrap=args.bootstrap, n_permutations=args.permutations)
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = write_run(Path(tmp) / "run", rows, {"run_id": "bench"})
        run, load_wall, load_cpu = timed(lambda: load_run(run_dir))
        _, analyse_wall, analyse_cpu = timed(lambda: analyse(run, options, make_figures=False))
        paths, report_wall, report_cpu = timed(lambda: build_report(run_dir, Path(tmp) / "report", options=options))
        html_mb = paths.html.stat().st_size / 1e6
        n_figures, n_tables = len(paths.figures), len(paths.tables)

    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}")
    print(f"rows: {len(rows)} ({args.judges} judges, {args.size}x{args.size} positions, {args.docs} docs/cell); "
          f"bootstrap {args.bootstrap}, permutations {args.permutations}")  # fmt: skip
    print(f"report: {n_figures} figures, {n_tables} CSV tables, HTML {html_mb:.1f} MB")
    print("| step | wall s | CPU s | CPU ratio to load |")
    print("| --- | ---: | ---: | ---: |")
    for name, wall, cpu in (
        ("load_run (baseline)", load_wall, load_cpu),
        ("analyses, no figures", analyse_wall, analyse_cpu),
        ("build_report (all)", report_wall, report_cpu),
    ):
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {cpu / load_cpu:.1f} |")


if __name__ == "__main__":
    main()
