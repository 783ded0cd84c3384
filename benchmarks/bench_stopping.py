"""Stopping rules: hot-path cost per score, and how accurate each rule leaves a cell.

    python benchmarks/bench_stopping.py [--runs 2000] [--ci-runs 200] [--cells 480]

Part 1 (cost): microseconds per ``update`` for each rule, fed one stream in
document order, against two baselines measured in the same run: a bare
Python loop doing what every rule must do at least (float the score, count
it, add it), and ``request_key`` of a typical judge call (two ~1,500-character
windows), which the engine computes for every call anyway.

Part 2 (accuracy): simulated cells with known true means, scored by
judge-like score distributions on 0-100.  For the paper rule and for ``ci``
(epsilon 2 points, alpha 0.05 split over ``--cells`` cells, both CS methods)
it reports the documents used and the absolute error of the cell mean at the
stopping point.  ARCHITECTURE.md expects the paper rule to behave like n = 100 with
errors of 2-4 points.
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from engine.contracts import CallRequest, Decoding, Message, request_key
from engine.stopping.confseq import grid_breaks, hedged_capital_cs, pprl_eb_cs
from engine.stopping.rules import make_rule_factory
from engine.stopping.spec import CiSpec, FixedSpec, PaperSpec

# Judge-like score distributions on [0, 1] (x100 = points): name -> sampler.
Sampler = Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]


def _bands(levels: list[float], weights: list[float]) -> tuple[Sampler, float]:
    lv, w = np.array(levels), np.array(weights)
    return (lambda rng, shape: rng.choice(lv, p=w, size=shape)), float(lv @ w)


DISTRIBUTIONS: dict[str, tuple[Sampler, float]] = {
    # a 5-level rubric judge, scores spread over the whole scale (sd ~33 points)
    "5 bands, spread": _bands([0, 0.25, 0.5, 0.75, 1.0], [0.1, 0.15, 0.2, 0.25, 0.3]),
    # a judge that mostly says "very similar" (10-point bins, sd ~13 points)
    "10-pt bins, high": _bands(
        [0.5, 0.6, 0.7, 0.8, 0.9, 1.0], [0.03, 0.07, 0.15, 0.3, 0.3, 0.15]
    ),
    # continuous, skewed (scaled Beta(8, 2): mean 80, sd ~12 points)
    "beta(8,2)": ((lambda rng, shape: rng.beta(8.0, 2.0, size=shape)), 0.8),
    # all-or-nothing judge (0 or 100, p = 0.8: sd 40 points)
    "0/100, p=.8": ((lambda rng, shape: (rng.random(shape) < 0.8).astype(float)), 0.8),
}


def time_updates(spec: StoppingSpec, scores: list[float], cells: int) -> tuple[float, int]:
    """Seconds per update and updates made, feeding until done (or the stream ends)."""
    rule = make_rule_factory(spec, cells)()
    start = time.perf_counter()
    for score in scores:
        rule.update(score)
        if rule.done:
            break
    elapsed = time.perf_counter() - start
    return elapsed / rule.n, rule.n


def time_baseline(scores: list[float]) -> float:
    start = time.perf_counter()
    n, total = 0, 0.0
    for score in scores:
        value = float(score)
        n += 1
        total += value
    assert n == len(scores) and total >= 0.0
    return (time.perf_counter() - start) / len(scores)


def time_request_key(count: int = 20000) -> float:
    window = "The committee approved the proposal after a long debate. " * 26  # ~1,500 chars
    request = CallRequest(
        namespace="judge",
        adapter="openai",
        model="judge-model",
        revision="",
        messages=(
            Message("system", "Rate the similarity of the two texts from 0 to 100."),
            Message("user", f"Text A:\n{window}\n\nText B:\n{window}not\n\nScore:"),
        ),
        decoding=Decoding(max_tokens=4),
    )
    start = time.perf_counter()
    for _ in range(count):
        request_key(request)
    return (time.perf_counter() - start) / count


def cost_table(cells: int) -> list[str]:
    rng = np.random.default_rng(20261130)
    scores = (DISTRIBUTIONS["5 bands, spread"][0](rng, (20000,)) * 100.0).tolist()
    baseline = min(time_baseline(scores) for _ in range(5))
    key_cost = min(time_request_key() for _ in range(3))
    specs = {
        "fixed n=20000": FixedSpec(n=20000),
        "paper (tol 0, runs all)": PaperSpec(tolerance=0.0),
        "ci eb, eps 2": CiSpec(method="eb", epsilon=2.0),
        "ci hedged, eps 2": CiSpec(method="hedged", epsilon=2.0),
        "ci hedged, eps 0.5": CiSpec(method="hedged", epsilon=0.5),
    }
    lines = [
        f"baseline (bare loop: float, count, add): {baseline * 1e6:.3f} us/score; "
        f"request_key of one call: {key_cost * 1e6:.2f} us",
        f"ci rules with alpha 0.05/{cells} per cell",
        "",
        "| rule | updates | us/update | x bare loop | x request_key |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, spec in specs.items():
        per, n = min((time_updates(spec, scores, cells) for _ in range(3)), key=lambda r: r[0])
        lines.append(
            f"| {name} | {n} | {per * 1e6:.2f} | {per / baseline:.0f} | {per / key_cost:.2f} |"
        )
    return lines


def paper_stops(x: np.ndarray, window: int = 10, tolerance: float = 1.0, min_docs: int = 100):
    """Vectorised paper rule over runs: (stopping n, mean at stop), n = T if never."""
    points = x * 100.0
    t = np.arange(1, x.shape[-1] + 1)
    means = np.cumsum(points, axis=-1) / t
    windows = sliding_window_view(means, window + 1, axis=-1)  # ends at n = window+1..T
    settled = windows.max(axis=-1) - windows.min(axis=-1) <= tolerance + 1e-9
    n_at = np.arange(window + 1, x.shape[-1] + 1)
    settled &= n_at >= min_docs
    index = np.where(settled.any(axis=-1), settled.argmax(axis=-1), settled.shape[-1] - 1)
    stop_n = n_at[index]
    return stop_n, means[np.arange(len(x)), stop_n - 1]


def ci_stops(x: np.ndarray, lower: np.ndarray, upper: np.ndarray, epsilon: float):
    settled = (upper - lower) * 50.0 <= epsilon
    index = np.where(settled.any(axis=-1), settled.argmax(axis=-1), x.shape[-1] - 1)
    means = np.cumsum(x, axis=-1) / np.arange(1, x.shape[-1] + 1) * 100.0
    return index + 1, means[np.arange(len(x)), index], settled.any(axis=-1)


def describe(n: np.ndarray, err: np.ndarray) -> str:
    return (
        f"{np.median(n):.0f} | {np.percentile(n, 90):.0f} | {err.mean():.2f} | "
        f"{np.percentile(err, 95):.2f} | {(err > 2.0).mean():.1%}"
    )


def accuracy_table(runs: int, ci_runs: int, cells: int, horizon: int) -> list[str]:
    alpha = 0.05 / cells
    lines = [
        f"paper: window 10, tolerance 1 point, min 100 docs; {runs} runs per distribution.",
        f"ci: epsilon 2 points, alpha 0.05/{cells} = {alpha:.2e} per cell (or 0.05 for a "
        f"single cell); {ci_runs} runs, "
        f"horizon {horizon} docs.",
        "",
        "| distribution | sd (pts) | rule | median n | p90 n | mean abs err | p95 abs err "
        "| err > 2 pts | CS misses mu |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for seed, (name, (sample, mu)) in enumerate(DISTRIBUTIONS.items()):
        rng = np.random.default_rng([20261130, seed])
        x = sample(rng, (runs, 2000))
        sd = float(np.std(x)) * 100.0
        stop_n, mean_at = paper_stops(x)
        err = np.abs(mean_at - mu * 100.0)
        lines.append(f"| {name} | {sd:.1f} | paper | {describe(stop_n, err)} | - |")
        xc = sample(rng, (ci_runs, horizon))
        settings = (
            ("eb", pprl_eb_cs, alpha, {}),
            ("hedged", hedged_capital_cs, alpha, {"breaks": grid_breaks(2.0)}),
            ("hedged, 1 cell", hedged_capital_cs, 0.05, {"breaks": grid_breaks(2.0)}),
        )
        for label, fn, cell_alpha, kwargs in settings:
            lower, upper = fn(xc, cell_alpha, **kwargs)
            n, mean_at, stopped = ci_stops(xc, lower, upper, 2.0)
            err = np.abs(mean_at - mu * 100.0)
            idx = (np.arange(len(xc)), n - 1)
            missed = ~((lower[idx] <= mu) & (mu <= upper[idx]))
            note = "" if stopped.all() else f" ({(~stopped).mean():.0%} hit horizon)"
            lines.append(
                f"| {name} | {sd:.1f} | ci {label}{note} | {describe(n, err)} | "
                f"{missed.mean():.1%} |"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--ci-runs", type=int, default=200)
    parser.add_argument("--cells", type=int, default=480)
    parser.add_argument("--horizon", type=int, default=20000)
    args = parser.parse_args()
    print(f"machine: {platform.machine()} {platform.processor() or ''} python {platform.python_version()}")
    started = time.perf_counter()
    for line in cost_table(args.cells):
        print(line)
    print()
    for line in accuracy_table(args.runs, args.ci_runs, args.cells, args.horizon):
        print(line)
    print(f"\n(total {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
