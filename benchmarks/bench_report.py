"""Peak memory and time of a whole `needlejudge report` process.

    python benchmarks/bench_report.py RUN_DIR [--code PATH] [--label NAME] [--bootstrap 2000] [--permutations 1000]
    python benchmarks/bench_report.py --make-synthetic DIR --rows 1000000

Runs `python -m engine.cli report RUN_DIR --out <fresh tmp folder>` as a child
process, with PYTHONPATH set to --code (default: this checkout), so the same
command measures the code before a change (an exported tree of the old
commit) and after it, on the same run folder, in the same session. While
the child runs, /proc/PID/status is sampled every 20 ms:

- VmHWM: the kernel's peak resident set size (anonymous + file pages);
- RssAnon: anonymous memory, the memory the process really holds (its
  peak over the samples), not page cache.

Wall and CPU seconds (the child's user + system time) are printed; on a
shared machine the wall time carries other people's load, CPU time less so.

`--make-synthetic DIR --rows N` writes a synthetic run folder of about N
rows (analysis.synthetic: planted effects, order swaps, controls; three
judges on the 10×10 grid) as results.jsonl + results.parquet + manifest.json,
the way an exported run looks.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _status_kib(pid: int, *fields: str) -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            for line in handle:
                name, _, value = line.partition(":")
                if name in fields:
                    out[name] = int(value.split()[0])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return out


def measure_report(run_dir: Path, code: Path, extra: list[str]) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "engine.cli", "report", str(run_dir.resolve()), "--out", str(Path(tmp) / "report"), *extra]
        env = dict(os.environ, PYTHONPATH=str(code))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        # cwd=code too: `python -m` puts the working directory first on sys.path
        child = subprocess.Popen(cmd, env=env, cwd=code, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        hwm = anon = 0
        while child.poll() is None:
            sample = _status_kib(child.pid, "VmHWM", "RssAnon")
            hwm = max(hwm, sample.get("VmHWM", 0))
            anon = max(anon, sample.get("RssAnon", 0))
            time.sleep(0.02)
        wall = time.perf_counter() - started
        out, err = child.communicate()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if child.returncode != 0:
            raise SystemExit(f"report failed ({child.returncode}):\n{err[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # ru_maxrss of children is the largest child so far: a cross-check of the sampled VmHWM
    return {"wall_s": wall, "cpu_s": cpu, "vmhwm_mib": hwm / 1024, "rss_anon_peak_mib": anon / 1024,
            "ru_maxrss_mib": after.ru_maxrss / 1024}  # fmt: skip


def make_synthetic(out: Path, rows: int) -> None:
    sys.path.insert(0, str(ROOT))
    from analysis.synthetic import SyntheticJudge, reference_judges, synthetic_rows, write_run
    from engine.run.results import jsonl_to_parquet

    judges = reference_judges() + [SyntheticJudge(name="steady")]
    per_doc = len(judges) * 4 * 2 * 100 * 1.05  # judges × needles × hays × cells, plus ~5% order swaps
    docs = max(1, round(rows / per_doc))
    result = synthetic_rows(judges, size=10, docs_per_cell=docs, swapped_docs=max(1, docs // 20), controls=24)
    write_run(out, result, {"run_id": f"synthetic-{len(result)}"})
    del result
    jsonl_to_parquet(out / "results.jsonl", out / "results.parquet")
    print(f"{out}: {sum(1 for _ in (out / 'results.jsonl').open('rb')):,} rows")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", nargs="?", type=Path)
    parser.add_argument("--code", type=Path, default=ROOT, help="source tree to run (PYTHONPATH of the child)")
    parser.add_argument("--label", default="", help="name of the measured code in the output line")
    parser.add_argument("--bootstrap", type=int, default=2000)
    parser.add_argument("--permutations", type=int, default=1000)
    parser.add_argument("--make-synthetic", type=Path, default=None, metavar="DIR")
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    if args.make_synthetic is not None:
        make_synthetic(args.make_synthetic, args.rows)
        return
    if args.run_dir is None:
        parser.error("RUN_DIR is required (or --make-synthetic DIR)")
    extra = ["--bootstrap", str(args.bootstrap), "--permutations", str(args.permutations)]
    # the code before the reuse check has no --force; every run builds into a fresh folder anyway
    m = measure_report(args.run_dir, args.code, extra)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(f"| {args.label or args.code} | {args.run_dir.name} | {m['wall_s']:.1f} | {m['cpu_s']:.1f} | "
          f"{m['vmhwm_mib']:.0f} | {m['rss_anon_peak_mib']:.0f} |")  # fmt: skip


if __name__ == "__main__":
    main()
