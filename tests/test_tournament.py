"""engine.tournament: the comparison graph, its config errors, and a whole
tournament at the fake server (a simulated judge with planted strengths)
through the report's tournament section."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from engine.run.runner import run_experiment
from engine.tournament import TournamentSpec, comparison_graph, components
from experiments import config_error, fake_judge, judge_table, write_experiment

HEAD = 'store = "s"\noutput = "o"\n' + judge_table("jaccard", "baseline", "jaccard") + judge_table("gpt", "openai", "gpt-4o-mini")


def test_all_pairs_and_a_seeded_sparse_graph() -> None:
    spec = TournamentSpec(judges=("gpt",), contestants=tuple("abcdefghij"))
    assert len(comparison_graph(spec, 0)) == 45
    sparse = TournamentSpec(judges=("gpt",), contestants=tuple("abcdefghij"), graph="random", degree=4)
    edges = comparison_graph(sparse, 1)
    assert edges == comparison_graph(sparse, 1) and 10 < len(edges) < 35
    assert components(list("abcd"), [("a", "b"), ("c", "d")]) == [{"a", "b"}, {"c", "d"}]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('judges = ["gpt"]\ngraph = "random"\ndegree = 0.3', "`tournament.graph`: the random comparison graph (degree 0.3, seed 0) is not connected"),
        ('judges = ["gpt"]\ncontestants = ["neg", "swap"]', "`tournament.contestants`: 'swap' is not one of the experiment's needles"),
        ('judges = ["jaccard"]', "`tournament.judges`: 'jaccard' is a baseline judge; only a model judge can answer a pairwise prompt"),
        ('judges = ["claude"]', "`tournament.judges`: unknown judge 'claude'"),
        ('judges = ["gpt"]\nposition = [40, 40]', "`tournament.position`: [40, 40] is not one of the design's positions"),
    ],
)
def test_bad_tournaments_are_config_errors_naming_the_key(table: str, message: str) -> None:
    assert message in config_error(HEAD + "[tournament]\n" + table + "\n")


DESIGN = """
seed = 2
needles = ["none", "neg", "con", "ner"]
hays = ["orig"]
positions = [[1, 1]]
stopping = { kind = "fixed", n = 2 }
tournament = { judges = ["sim"], documents = 8 }
"""


def test_a_tournament_ranks_the_planted_strengths_and_counts_swap_disagreements(tmp_path: Path, prepared_store, corpus_slice_path, corpus_settings) -> None:  # type: ignore[no-untyped-def]
    from analysis.load import load_run
    from analysis.options import AnalysisOptions
    from analysis.tournament_sections import tournament_section
    from simulation.fake_config import FakeConfig
    from simulation.fake_server import serve_in_thread
    from simulation.judge import SimJudgeParams

    # strengths needle_mean / 10: none 9.7 > con 7.4 > ner 6.8 > neg 6.2; a first-shown bias of 0.4
    planted = SimJudgeParams(seed=4, order_bias=4.0)
    with serve_in_thread(FakeConfig(judges={"local-sim": planted})) as server:
        config = write_experiment(tmp_path, prepared_store, corpus_slice_path, corpus_settings, DESIGN + fake_judge("sim", "local-sim", server.url))
        summary = run_experiment(config)
        calls = server.stats()["requests"]
    rows = [json.loads(line) for line in Path(summary.results_jsonl).read_text().splitlines()]
    comparisons = [r for r in rows if r["control"] == "tournament"]
    assert len(comparisons) == 6 * 2 * 8 and {r["prompt_id"] for r in comparisons} == {"closer"}
    assert all(r["status"] == "ok" and r["score"] in (0.0, 50.0, 100.0) for r in comparisons)
    assert calls == len(comparisons) + 4 * 2  # and the judge's own scoring cells (2 documents each)
    section = tournament_section(load_run(Path(summary.results_jsonl).parent), AnalysisOptions(n_bootstrap=200))
    tables = {t.name: t.rows for t in section.tables}
    ranking = [r.contestant for r in tables["tournament_strengths"]]
    assert ranking[0] == "none" and ranking[-1] == "neg"
    (swap,) = tables["tournament_swaps"]
    assert swap.n == 6 * 8 and 0 < swap.disagreements < swap.n and swap.first_shown_wins > 0.5
    (cost,) = tables["tournament_cost"]
    assert (cost.contestants, cost.comparisons, cost.n, cost.calls_direct) == (4, 6, 96, 4 * 8)
    assert section.figures and section.figures[0].png[:4] == b"\x89PNG"
    assert np.isfinite([r.low for r in tables["tournament_strengths"]]).all()
