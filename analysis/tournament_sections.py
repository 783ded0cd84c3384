"""The report's tournament section: Bradley-Terry strengths of the
contestants per judge with bootstrap CIs, the swap test, a ranking
figure, and the tournament's cost against scoring each contestant
directly (rows with control = "tournament": engine.tournament)."""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np

from analysis import tournament
from analysis.load import Run, Table
from analysis.options import AnalysisOptions, RaterRow, rng_for
from analysis.render import FigureSpec, Section, TableSpec


class TournamentCost(RaterRow, frozen=True):
    contestants: int
    comparisons: int  # pairs of contestants compared (graph edges)
    n: int  # answered comparison calls (both orders)
    calls_direct: int  # one score per contestant per document (per needle, for documents) instead


class Comparisons(msgspec.Struct, frozen=True):
    contestants: list[str]
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray  # a's score: 1, 0.5, 0
    first: np.ndarray  # per comparison asked both ways: a's score shown first ...
    second: np.ndarray  # ... and shown second


def comparisons(t: Table) -> Comparisons:
    """The answered comparisons of one judge's tournament rows."""
    ok = t.select(t.mask(status="ok") & ~np.isnan(t["score"]))
    pairs = [str(v).split("|") for v in ok["needle"]]
    contestants = sorted({c for pair in pairs for c in pair})
    index = {c: n for n, c in enumerate(contestants)}
    a = np.array([index[x] for x, _ in pairs], dtype=int)
    b = np.array([index[y] for _, y in pairs], dtype=int)
    shown_first = ok["score"] / 100.0  # the first-shown edit's score; order 12 shows x first
    outcome = np.where(ok["order"] == "12", shown_first, 1.0 - shown_first)
    by_item: dict[tuple, dict[str, float]] = {}  # one comparison: its contestants, document and repetition
    for needle, doc, index, order, value in zip(ok["needle"], ok["doc_id"], ok["doc_index"], ok["order"], outcome):
        by_item.setdefault((needle, doc, int(index)), {})[str(order)] = float(value)
    both = [v for v in by_item.values() if len(v) == 2]
    return Comparisons(contestants, a, b, outcome.astype(float), np.array([v["12"] for v in both]), np.array([v["21"] for v in both]))


def ranking_figure(rows: list[tournament.StrengthRow]) -> Any:
    from matplotlib.figure import Figure

    judges = sorted({r.judge for r in rows})
    fig = Figure(figsize=(6.5, 1.2 + 0.45 * len(rows)))
    ax = fig.add_subplot()
    for k, judge in enumerate(judges):
        mine = [r for r in rows if r.judge == judge]
        y = np.arange(len(mine)) + k * (len(mine) + 1)
        ax.errorbar([r.strength for r in mine], y, xerr=[[r.strength - r.low for r in mine], [r.high - r.strength for r in mine]],
                    fmt="o", capsize=3, label=judge)  # fmt: skip
        for yy, r in zip(y, mine):
            ax.annotate(f"{r.contestant} ({judge})", (r.high, yy), xytext=(4, -3), textcoords="offset points", fontsize=8)
    ax.invert_yaxis()
    ax.set_yticks([])
    ax.set_xlabel("Bradley-Terry log-strength (centred); bars: bootstrap CI")
    ax.set_title("Tournament ranking: whose edit is closer to its original")
    fig.tight_layout()
    return fig


def tournament_section(run: Run, options: AnalysisOptions, make_figures: bool = True) -> Section:
    rows = run.rows.where(control="tournament")
    from analysis.figures import figure_bytes

    sec = Section(
        title="Tournament",
        intro="Pairwise comparisons of contestants: needle types (which of two edits of one document is closer to the original), "
        "positions (\"(i,j)\": the same needle in two windows) or documents (two documents' edits), A, B or tie, each comparison "
        "asked in both orders; with positions and documents each edit is shown beside its own original. Strengths are Bradley-Terry log-strengths fitted with choix, ties counted as half "
        "a win for each side; CIs resample comparisons.",
    )
    strengths: list[tournament.StrengthRow] = []
    swaps: list[tournament.SwapRow] = []
    costs: list[TournamentCost] = []
    for (judge, prompt_id, version), t in rows.groups("judge", "prompt_id", "prompt_version"):
        c = comparisons(t)
        if c.a.size == 0:
            continue
        mine = tournament.strengths_table((judge, prompt_id, version), c.contestants, c.a, c.b, c.outcome, rng=rng_for(options, "tournament", judge),
                                          n_resamples=min(options.n_bootstrap, 500), confidence=options.confidence)  # fmt: skip
        strengths += mine
        swap = tournament.swap_test((judge, prompt_id, version), c.first, c.second)
        swaps.append(swap)
        edges = len(set(str(v) for v in t["needle"]))
        documents = len(set(int(v) for v in t["doc_index"]))  # documents (for documents: needles) each contestant met
        costs.append(TournamentCost(judge, prompt_id, version, len(c.contestants), edges, int(c.a.size), len(c.contestants) * documents))
        ranking = " > ".join(r.contestant for r in mine)
        sec.findings.append(f"{judge} ({prompt_id}@{version}): ranking {ranking} from {c.a.size} answered comparisons; swap test: "
                            f"{swap.disagreements} of {swap.n} comparisons changed winner with the order "
                            f"(first-shown edit won {swap.first_shown_wins:.0%} of decisive answers).")  # fmt: skip
    sec.tables += [
        TableSpec("tournament_strengths", "Bradley-Terry strengths", "Per judge, strongest first (ties as half wins).", tournament.StrengthRow, strengths),
        TableSpec("tournament_swaps", "Swap test", "Each comparison asked in both orders; a disagreement names another winner "
                  "(or a tie) once the order is undone.", tournament.SwapRow, swaps),  # fmt: skip
        TableSpec("tournament_cost", "Cost against direct scoring", "n: comparison calls answered; calls_direct: one score per "
                  "contestant per document.", TournamentCost, costs),  # fmt: skip
    ]
    if make_figures and strengths:
        sec.figures.append(FigureSpec("tournament_ranking", "Tournament ranking with bootstrap CIs.", figure_bytes(ranking_figure(strengths))))
    return sec
