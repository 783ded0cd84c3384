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
from matplotlib.collections import LineCollection  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from analysis.fingerprint import score_histogram  # noqa: E402
from analysis.hay import PercentileShift  # noqa: E402
from analysis.length import LengthRow, overlap_reference  # noqa: E402
from analysis.load import Table  # noqa: E402
from analysis.needles import NeedleMean  # noqa: E402
from analysis.positionality import CellEmdRow, PositionalityRow, PositionGrid  # noqa: E402
from analysis.stats import kde_curve  # noqa: E402

NEEDLE_COLORS = {"none": "#7f7f7f", "neg": "#d62728", "con": "#1f77b4", "ner": "#2ca02c", "all": "#000000"}
DPI = 90


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


def position_figure(grid: PositionGrid, emd_rows: Sequence[CellEmdRow], kde_points: int = 64) -> Figure:
    """Upper triangle (i ≤ j): mean score heatmap, '*' where the EMD to the
    mirror cell exceeds its permutation null. Lower triangle (i > j): KDE of
    the scores at (i, j) (red) over those at its mirror (j, i) (blue);
    constant data are drawn as a spike."""
    judge, prompt_id, prompt_version, needle, hay = grid.key
    size = grid.size
    upper = np.where(np.triu(np.ones((size, size), dtype=bool)), grid.mean, np.nan)
    width = max(5.5, 1.6 + 0.55 * size)
    height = 1.5 + 0.55 * size
    fig = plt.figure(figsize=(width, height))
    # fixed margins: a layout engine would redraw the ~200 artists several times
    ax = fig.add_axes((0.9 / width, 0.7 / height, (width - 2.1) / width, (height - 1.6) / height))
    cax = fig.add_axes(((width - 1.0) / width, 0.7 / height, 0.15 / width, (height - 1.6) / height))
    image = ax.imshow(upper, cmap="viridis", vmin=0, vmax=100, aspect="auto")
    fig.colorbar(image, cax=cax, label="mean score")
    exceeding = {(r.i, r.j) for r in emd_rows if r.exceeds}
    for i in range(size):
        for j in range(i, size):
            if not np.isnan(grid.mean[i, j]):
                mark = "*" if (i, j) in exceeding else ""
                value = grid.mean[i, j]
                ax.text(j, i, f"{value:.0f}{mark}", ha="center", va="center", fontsize=7,
                        color="white" if value < 60 else "black")  # fmt: skip
    xs = np.linspace(0, 100, kde_points)
    segments: dict[str, list[np.ndarray]] = {"#d62728": [], "#1f77b4": []}
    for i in range(size):
        for j in range(i):
            for cell, color in (((i, j), "#d62728"), ((j, i), "#1f77b4")):
                if cell not in grid.scores:
                    continue
                curve = kde_curve(grid.scores[cell], xs)
                if curve.density is not None:
                    d = curve.density / max(curve.density.max(), 1e-12)
                    segments[color].append(np.column_stack([j - 0.45 + 0.9 * xs / 100.0, i + 0.45 - 0.85 * d]))
                elif curve.point is not None:
                    x = j - 0.45 + 0.9 * curve.point / 100.0
                    segments[color].append(np.array([[x, i + 0.45], [x, i - 0.4]]))
    for color, segs in segments.items():
        ax.add_collection(LineCollection(segs, colors=color, linewidths=0.9))
    edges = np.arange(size + 1) - 0.5
    ax.hlines(edges, -0.5, size - 0.5, colors="#cccccc", linewidths=0.3)
    ax.vlines(edges, -0.5, size - 0.5, colors="#cccccc", linewidths=0.3)
    ax.set_xlim(-0.5, size - 0.5)
    ax.set_ylim(size - 0.5, -0.5)
    ax.set_xticks(range(size))
    ax.set_yticks(range(size))
    ax.set_xlabel("j (sentences after the needle)")
    ax.set_ylabel("i (sentences before the needle)")
    ax.set_title(
        f"{judge} · {prompt_label(prompt_id, prompt_version)} · needle {needle} · hay {hay} · n={int(grid.n.sum())}\n"
        "upper: mean score (* EMD to mirror cell above its null)\nlower: KDE of (i,j) red over its mirror (j,i) blue",
        fontsize=8,
    )
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
        ax.plot(ks, overlap_reference(ks), "k--", lw=1, label="100·(k−1)/k")
        for needle in sorted({r.needle for r in sub}):
            pts = sorted((r for r in sub if r.needle == needle), key=lambda r: r.k)
            k = np.array([r.k for r in pts])
            m = np.array([r.mean for r in pts])
            sd = np.nan_to_num(np.array([r.sd for r in pts]))
            color = NEEDLE_COLORS.get(needle, None)
            ax.plot(k, m, marker="o", ms=3, color=color, label=needle, lw=1.6 if needle == "all" else 1)
            if needle == "all":
                ax.fill_between(k, m - sd, m + sd, color="#999999", alpha=0.25, lw=0)
        n = sum(r.n for r in sub if r.needle == "all")
        ax.set_title(f"hay {hay} (n={n})", fontsize=9)
        ax.set_xlabel("document length k = i + j + 1")
        ax.set_ylim(0, 102)
    axes[0][0].set_ylabel("score (mean; band ±1 sd pooled)")
    axes[0][-1].legend(fontsize=7, loc="lower right")
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
    axes[0][-1].legend(fontsize=7, loc="lower right")
    fig.suptitle("Mean score by needle type", fontsize=10)
    return fig


def hay_figure(curves: Sequence[PercentileShift]) -> Figure:
    """Percentile shift: each percentile of the orig scores (x) against its
    change under rand hay (y), one line per needle."""
    judge, prompt_id, prompt_version = curves[0].judge, curves[0].prompt_id, curves[0].prompt_version
    fig, ax = plt.subplots(layout="constrained", figsize=(5.5, 3.8))
    ax.axhline(0, color="k", lw=0.8)
    for needle in sorted({c.needle for c in curves}):
        pts = [c for c in curves if c.needle == needle]
        ax.plot([c.orig for c in pts], [c.shift for c in pts], marker=".", ms=3, lw=1,
                color=NEEDLE_COLORS.get(needle), label=f"{needle} (n={pts[0].n_orig}+{pts[0].n_rand})")  # fmt: skip
    ax.set_xlabel("score at percentile p under orig hay")
    ax.set_ylabel("rand − orig at percentile p")
    ax.legend(fontsize=7)
    ax.set_title(f"Percentile shift orig → rand — {judge} · {prompt_label(prompt_id, prompt_version)}", fontsize=9)
    return fig


def bias_figure(rows: Sequence[PositionalityRow]) -> Figure:
    """Forest plot of the early-positionality bias with its CI per
    judge × prompt × needle × hay; filled markers are significant (Holm)."""
    fig, ax = plt.subplots(layout="constrained", figsize=(7, 0.28 * len(rows) + 1.2))
    ax.axvline(0, color="k", lw=0.8)
    labels = []
    for y, r in enumerate(rows):
        color = NEEDLE_COLORS.get(r.needle)
        ax.plot([r.bias_low, r.bias_high], [y, y], color=color, lw=1.2)
        ax.plot([r.bias], [y], marker="o", color=color, mfc=color if r.significant else "white", ms=5)
        labels.append(f"{r.judge} · {prompt_label(r.prompt_id, r.prompt_version)} · {r.needle}/{r.hay} (n={r.n_first}+{r.n_second})")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("early-positionality bias = mean(i > j) − mean(i < j), points")
    ax.set_title("Early-positionality bias (filled: KS significant after Holm)", fontsize=9)
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
