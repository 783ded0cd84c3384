"""Figures (matplotlib, Agg backend): each function takes analysis results
and returns a Figure whose title names the judge, prompt id@version and n.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from analysis.fingerprint import score_histogram  # noqa: E402
from analysis.hay import PercentileShift  # noqa: E402
from analysis.length import LengthRow, overlap_reference  # noqa: E402
from analysis.load import Table  # noqa: E402
from analysis.needles import NeedleMean  # noqa: E402
from analysis.positionality import CellEmdRow, PositionalityRow, PositionGrid  # noqa: E402

NEEDLE_COLORS = {"none": "#7f7f7f", "neg": "#d62728", "con": "#1f77b4", "ner": "#2ca02c", "all": "#000000"}
DPI = 100


def prompt_label(prompt_id: str, prompt_version: str) -> str:
    return f"{prompt_id}@{prompt_version}"


def figure_bytes(fig: Figure, path: Path | None = None) -> bytes:
    """PNG bytes of the figure (also written to `path` when given); closes it."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    plt.close(fig)
    data = buf.getvalue()
    if path is not None:
        path.write_bytes(data)
    return data


def _mirror_histograms(grid: PositionGrid, distance: int, bins: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Scores pooled over the cells at distance j − i = d (needle early) and
    over their mirrors i − j = d (needle late), as shares per bin."""
    early = [grid.scores[(i, i + distance)] for i in range(grid.size - distance) if (i, i + distance) in grid.scores]
    late = [grid.scores[(i + distance, i)] for i in range(grid.size - distance) if (i + distance, i) in grid.scores]
    out = []
    for parts in (early, late):
        values = np.concatenate(parts) if parts else np.zeros(0)
        counts, _ = np.histogram(values, bins=bins)
        out.append((counts / max(1, values.size), values.size))
    (h_early, n_early), (h_late, n_late) = out
    return h_early, h_late, n_early, n_late


def colour_range(grids: Sequence[PositionGrid]) -> tuple[float, float]:
    """The span of the grids' cell means (one judge's grids share it), at least 1 point wide."""
    values = np.concatenate([g.mean[~np.isnan(g.mean)] for g in grids]) if grids else np.zeros(0)
    if values.size == 0:
        return 0.0, 100.0
    low, high = float(np.floor(values.min())), float(np.ceil(values.max()))
    return (low, high) if high > low else (low - 0.5, high + 0.5)


def position_figure(grid: PositionGrid, emd_rows: Sequence[CellEmdRow], *, alpha: float = 0.05,
                    vrange: tuple[float, float] | None = None) -> Figure:
    """Left: mean score per cell (i, j) coloured over `vrange` (default: this
    grid's span; the report passes the judge's), '*' where the EMD between a
    cell and its mirror is significant after Holm within the grid (p_holm <=
    `alpha`); the title gives the n per cell. Right: one panel per distance
    d = |i − j|, the score distribution of early needles (i < j, pooled over
    the cells at that distance) over that of late ones (i > j)."""
    judge, prompt_id, prompt_version, needle, hay = grid.key
    size = grid.size
    # Fixed margins, sized for the labels (a test checks nothing is clipped):
    # a layout engine measures every cell label and costs ~1 s a figure.
    fig = plt.figure(figsize=(12.0, 5.8))
    ax = fig.add_axes((0.055, 0.10, 0.36, 0.76))
    cax = fig.add_axes((0.425, 0.10, 0.012, 0.76))
    low, high = vrange if vrange is not None else colour_range([grid])
    image = ax.imshow(grid.mean, cmap="viridis", vmin=low, vmax=high, aspect="auto")
    fig.colorbar(image, cax=cax, label=f"mean score (colours span {low:g}–{high:g}, this judge's cells)")
    exceeding = {(r.i, r.j) for r in emd_rows if r.p_holm <= alpha}
    bright = low + 0.6 * (high - low)
    font = 9 if size <= 10 else 7
    for i in range(size):
        for j in range(size):
            value = grid.mean[i, j]
            if not np.isnan(value):
                mark = "*" if (min(i, j), max(i, j)) in exceeding else ""
                ax.text(j, i, f"{value:.0f}{mark}", ha="center", va="center", fontsize=font, clip_on=True,
                        color="white" if value < bright else "black")  # fmt: skip
    ax.set_xticks(range(size))
    ax.set_yticks(range(size))
    ax.set_xlabel("j (sentences after the needle)")
    ax.set_ylabel("i (sentences before the needle)")
    counts = grid.n[grid.n > 0]
    per_cell = f"{int(counts.min())}" if counts.size and counts.min() == counts.max() else (
        f"{int(counts.min())}–{int(counts.max())}" if counts.size else "0")
    ax.set_title(f"mean score per cell, n={per_cell} per cell (* cell ≠ mirror: EMD permutation test, Holm, α={alpha:g})",
                 fontsize=8)
    distances = list(range(1, size))
    if distances:
        columns = min(3, len(distances))
        rows = -(-len(distances) // columns)
        spec = fig.add_gridspec(rows, columns, left=0.555, right=0.99, bottom=0.10, top=0.82, wspace=0.15, hspace=0.55)
        bins = np.linspace(0.0, 100.0, 21)
        centers = (bins[:-1] + bins[1:]) / 2
        first = None
        for n, distance in enumerate(distances):
            panel = fig.add_subplot(spec[n // columns, n % columns], sharex=first, sharey=first)
            first = first or panel
            h_early, h_late, n_early, n_late = _mirror_histograms(grid, distance, bins)
            panel.step(centers, h_early, where="mid", color="#d62728", lw=1.2)
            panel.step(centers, h_late, where="mid", color="#1f77b4", lw=1.2, ls="--")
            panel.set_title(f"|i − j| = {distance} (n={n_early}+{n_late})", fontsize=8, pad=2)
            panel.tick_params(labelsize=7, pad=1)
            panel.set_xlim(0, 100)
            panel.set_xticks((0, 50, 100))
            if n % columns:
                panel.tick_params(labelleft=False)
            if n < len(distances) - columns:
                panel.tick_params(labelbottom=False)
        fig.text(0.77, 0.015, "score (5-point bins)", ha="center", fontsize=8)
        fig.text(0.512, 0.46, "share of scores", va="center", rotation="vertical", fontsize=8)
        handles = [plt.Line2D([], [], color="#d62728", lw=1.2), plt.Line2D([], [], color="#1f77b4", lw=1.2, ls="--")]
        fig.legend(handles, ["early needle (i < j)", "late needle (i > j)"], loc="upper center", bbox_to_anchor=(0.76, 0.925),
                   ncols=2, fontsize=8, frameon=False)  # fmt: skip
    fig.suptitle(f"{judge} · {prompt_label(prompt_id, prompt_version)} · needle {needle} · hay {hay} · n={int(grid.n.sum())}",
                 fontsize=10, y=0.985)  # fmt: skip
    return fig


def length_figure(rows: Sequence[LengthRow]) -> Figure:
    """Mean ± sd by length k per needle (and pooled), one panel per hay,
    with the 100·(k−1)/k reference."""
    judge, prompt_id, prompt_version = rows[0].judge, rows[0].prompt_id, rows[0].prompt_version
    hays = sorted({r.hay for r in rows})
    fig, axes = plt.subplots(1, len(hays), layout="constrained", figsize=(5 * len(hays), 3.6), squeeze=False, sharey=True)
    for ax, hay in zip(axes[0], hays):
        sub = [r for r in rows if r.hay == hay]
        ks = np.array(sorted({r.k for r in sub}))
        ax.plot(ks, overlap_reference(ks), "k--", lw=1, label="100·(L−1)/L")
        for needle in sorted({r.needle for r in sub}):
            pts = sorted((r for r in sub if r.needle == needle), key=lambda r: r.k)
            k = np.array([r.k for r in pts])
            m = np.array([r.mean for r in pts])
            sd = np.nan_to_num(np.array([r.sd for r in pts]))
            color = NEEDLE_COLORS.get(needle, None)
            ax.plot(k, m, marker="o", ms=3, color=color, label=needle, lw=1.6 if needle == "all" else 1)
            if needle == "all":
                ax.fill_between(k, m - sd, m + sd, color="#999999", alpha=0.25, lw=0)
        pooled = [r.n for r in sub if r.needle == "all"]
        span = f"{min(pooled)}–{max(pooled)}" if pooled and min(pooled) != max(pooled) else f"{pooled[0] if pooled else 0}"
        ax.set_title(f"hay {hay} (n={sum(pooled)}; n={span} per length, pooled)", fontsize=9)
        ax.set_xlabel("document length L = i + j + 1 (sentences)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylim(0, 102)
    axes[0][0].set_ylabel("score (mean; band ±1 sd pooled)")
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="outside right upper", fontsize=7)
    fig.suptitle(f"Score by document length — {judge} · {prompt_label(prompt_id, prompt_version)}", fontsize=10)
    return fig


def needle_figure(means: Sequence[NeedleMean]) -> Figure:
    """Mean score (± sd) per needle type, grouped by judge × prompt, one panel per hay."""
    hays = sorted({m.hay for m in means})
    raters = sorted({(m.judge, m.prompt_id, m.prompt_version) for m in means})
    needles = [n for n in ("none", "con", "ner", "neg") if any(m.needle == n for m in means)]
    needles += sorted({m.needle for m in means} - set(needles))
    fig, axes = plt.subplots(1, len(hays), layout="constrained", figsize=(max(5, 1.6 * len(raters) + 2) * len(hays), 3.8), squeeze=False, sharey=True)
    width = 0.8 / max(1, len(needles))
    for ax, hay in zip(axes[0], hays):
        for n_idx, needle in enumerate(needles):
            xs, ys, es = [], [], []
            for r_idx, rater in enumerate(raters):
                hit = [m for m in means if (m.judge, m.prompt_id, m.prompt_version) == rater and m.hay == hay and m.needle == needle]
                if hit:
                    xs.append(r_idx + (n_idx - (len(needles) - 1) / 2) * width)
                    ys.append(hit[0].mean)
                    es.append(0.0 if np.isnan(hit[0].sd) else hit[0].sd)
            ax.bar(xs, ys, width=width, yerr=es, color=NEEDLE_COLORS.get(needle), label=needle, capsize=2, error_kw={"lw": 0.7})
        ax.set_xticks(range(len(raters)))
        ax.set_xticklabels([f"{j}\n{prompt_label(p, v)}" for j, p, v in raters], fontsize=7)
        n = sum(m.n for m in means if m.hay == hay)
        ax.set_title(f"hay {hay} (n={n})", fontsize=9)
        ax.set_ylim(0, 105)
    axes[0][0].set_ylabel("mean score ± sd")
    fig.legend(*axes[0][0].get_legend_handles_labels(), title="needle", loc="outside right upper", fontsize=7)
    fig.suptitle("Mean score by needle type", fontsize=10)
    return fig


def hay_figure(curves: Sequence[PercentileShift]) -> Figure:
    """Percentile shift: each percentile of the orig scores (x) against its
    change under rand hay (y), one line per needle."""
    judge, prompt_id, prompt_version = curves[0].judge, curves[0].prompt_id, curves[0].prompt_version
    fig, ax = plt.subplots(layout="constrained", figsize=(7.0, 3.8))
    ax.axhline(0, color="k", lw=0.8)
    for needle in sorted({c.needle for c in curves}):
        pts = [c for c in curves if c.needle == needle]
        ax.plot([c.orig for c in pts], [c.shift for c in pts], marker=".", ms=3, lw=1,
                color=NEEDLE_COLORS.get(needle), label=f"{needle} (n={pts[0].n_orig}+{pts[0].n_rand})")  # fmt: skip
    ax.set_xlabel("score at percentile p under orig hay")
    ax.set_ylabel("rand − orig at percentile p")
    fig.legend(loc="outside lower center", ncols=4, fontsize=7, title="needle (n orig+rand)", title_fontsize=7)
    fig.suptitle(f"Percentile shift orig → rand — {judge} · {prompt_label(prompt_id, prompt_version)}", fontsize=9)
    return fig


def bias_figure(rows: Sequence[PositionalityRow]) -> Figure:
    """Forest plot of the early-positionality bias with its CI, one panel per
    judge × prompt (facet title), one short line per needle/hay with its n;
    filled markers are significant (Holm)."""
    raters: dict[tuple[str, str, str], list[PositionalityRow]] = {}
    for r in rows:
        raters.setdefault((r.judge, r.prompt_id, r.prompt_version), []).append(r)
    heights = [len(group) for group in raters.values()]
    fig, axes = plt.subplots(len(raters), 1, layout="constrained", sharex=True, squeeze=False,
                             figsize=(8.0, 1.2 + sum(0.26 * h + 0.5 for h in heights)), height_ratios=heights)  # fmt: skip
    for ax, ((judge, pid, pver), group) in zip(axes[:, 0], raters.items()):
        ax.axvline(0, color="k", lw=0.8)
        for y, r in enumerate(group):
            color = NEEDLE_COLORS.get(r.needle)
            ax.plot([r.bias_low, r.bias_high], [y, y], color=color, lw=1.2)
            ax.plot([r.bias], [y], marker="o", color=color, mfc=color if r.significant else "white", ms=5)
        ax.set_yticks(range(len(group)))
        ax.set_yticklabels([f"{r.needle}/{r.hay}  n={r.n_first}+{r.n_second}" for r in group], fontsize=7)
        ax.set_ylim(len(group) - 0.5, -0.5)
        ax.set_title(f"{judge} · {prompt_label(pid, pver)}", fontsize=8, loc="left")
    axes[-1, 0].set_xlabel("bias = mean(i > j) − mean(i < j), points")
    marker = {"marker": "o", "color": "#444444", "ls": "none", "ms": 5}
    handles = [plt.Line2D([], [], mfc="#444444", **marker), plt.Line2D([], [], mfc="white", **marker)]
    fig.legend(handles, ["significant (KS, Holm)", "not significant"], loc="outside lower center", ncols=2, fontsize=7)
    fig.suptitle("Early-positionality bias with its CI (n = needles early + late)", fontsize=9)
    return fig


def fingerprint_figure(scored: Table) -> Figure:
    """Histogram of scores on integer levels 0..100 per judge × prompt."""
    raters = sorted(set(zip(scored["judge"].tolist(), scored["prompt_id"].tolist(), scored["prompt_version"].tolist())))
    fig, axes = plt.subplots(len(raters), 1, layout="constrained", figsize=(7, 1.7 * len(raters) + 0.6), squeeze=False, sharex=True)
    for ax, (judge, pid, pver) in zip(axes[:, 0], raters):
        s = scored.where(judge=judge, prompt_id=pid, prompt_version=pver)["score"]
        counts, edges = score_histogram(s)
        ax.bar(edges[:-1], counts / max(1, s.size), width=1.0, align="edge", color="#444444")
        for b in (25, 50, 75):
            ax.axvline(b, color="#d62728", lw=0.5, ls=":")
        ax.set_ylabel("share", fontsize=7)
        ax.set_title(f"{judge} · {prompt_label(pid, pver)} · n={s.size}", fontsize=8)
    axes[-1, 0].set_xlabel("score")
    fig.suptitle("Scoring fingerprint", fontsize=10)
    return fig
