"""Benchmark pair generation from a prepared corpus (no parsing).

    python benchmarks/bench_pairs.py [--store DIR] [--docs 100] [--k 9]

Generates every pair for D documents x 4 needles x 2 hay x (k+1)^2 positions
(100 x 4 x 2 x 100 = 80,000 by default), each verified by the oracle, first
with a cold Corpus (documents decoded from LMDB on first use), then again
warm. The store is prepared from the bundled sample on first use (not timed)
with a floor of 80 characters per sentence so that >= 100 documents survive.
Checks that spaCy is never imported in the process.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.contracts import HAYS, NEEDLES  # noqa: E402
from engine.cache.store import Store  # noqa: E402


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    return f"{os.cpu_count()} CPUs ({cpu}), Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}"


def ensure_store(path: Path, min_chars: float) -> None:
    if (path / "data.mdb").exists():
        return
    import subprocess

    # prepared in a child process so that this process never imports spaCy
    subprocess.run(
        [sys.executable, "-m", "engine.cli", "prepare", "--store", str(path), "--min-chars-per-sentence", str(min_chars), "--json"],
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip


def generate(corpus, doc_ids, k: int) -> tuple[int, float]:
    started = time.perf_counter()
    made = 0
    for doc_id in doc_ids:
        for needle in NEEDLES:
            for hay in HAYS:
                for i in range(k + 1):
                    for j in range(k + 1):
                        made += corpus.make_pair(doc_id, needle, hay, i, j, 0) is not None
    return made, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", type=Path, default=Path("/tmp/needlejudge-bench-pairs-store"))
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--k", type=int, default=9)
    parser.add_argument("--min-chars-per-sentence", type=float, default=80.0)
    args = parser.parse_args()
    ensure_store(args.store, args.min_chars_per_sentence)
    from engine.corpus.pairs import Corpus

    print(f"machine: {machine()}")
    with Store(args.store, readonly=True) as store:
        corpus = Corpus.open(store)
        doc_ids = corpus.doc_ids[: args.docs]
        print(f"{len(doc_ids)} documents x {len(NEEDLES)} needles x {len(HAYS)} hay x {(args.k + 1) ** 2} positions")
        made, cold = generate(corpus, doc_ids, args.k)
        made_warm, warm = generate(corpus, doc_ids, args.k)
        assert made == made_warm
        print(f"cold: {made} pairs in {cold:.2f} s = {made / cold:,.0f} pairs/s")
        print(f"warm: {made} pairs in {warm:.2f} s = {made / warm:,.0f} pairs/s (warm/cold {cold / warm:.2f})")
        print(f"oracle failures: {corpus.oracle_failures} {corpus.oracle_failure_reasons}")
        print(f"spaCy imported: {'spacy' in sys.modules}")


if __name__ == "__main__":
    main()
