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
        ('judges = ["gpt"]\nkind = "positions"\npositions = [[1, 1]]', "`tournament.positions`: expected at least 2 different [i, j] positions, got [[1, 1]]"),
        ('judges = ["gpt"]\nkind = "positions"\npositions = [[1, 1], [2, 2]]\nneedle = "none"', "`tournament.needle`: 'none'; expected one of 'neg', 'con', 'ner'"),
        ('judges = ["gpt"]\nkind = "positions"\npositions = [[1, 1], [2, 2]]\nposition = [1, 1]', "`tournament.position`: a tournament of positions has its contestants' own"),
        ('judges = ["gpt"]\nkind = "positions"\npositions = [[0, 0], [1, 1], [2, 2], [3, 3], [4, 4], [5, 5]]\ngraph = "random"\ndegree = 0.5',
         "`tournament.graph`: the random comparison graph (degree 0.5, seed 0) is not connected: (0,0)"),
        ('judges = ["gpt"]\nkind = "documents"\nentrants = 12\ngraph = "random"\ndegree = 0.5',
         "`tournament.graph`: the random comparison graph (degree 0.5, seed 0) is not connected: entrant 1"),
        ('judges = ["gpt"]\nkind = "documents"\nneedles = ["neg", "swap"]', "`tournament.needles`: 'swap' is not a needle type"),
        ('judges = ["gpt"]\nkind = "documents"\nentrants = 1', "`tournament.entrants`"),
        ('judges = ["gpt"]\nkind = "teams"', "`tournament.kind`"),
        ('judges = ["gpt"]\nkind = "documents"\ncontestants = ["neg", "con"]', "`tournament.contestants`: applies only to kind = 'needles'; this tournament's kind is 'documents'"),
        ('judges = ["gpt"]\nkind = "positions"\npositions = [[1, 1], [2, 2]]\nentrants = 4', "`tournament.entrants`: applies only to kind = 'documents'"),
        ('judges = ["gpt"]\npositions = [[1, 1], [2, 2]]', "`tournament.positions`: applies only to kind = 'positions' or 'documents'; this tournament's kind is 'needles'"),
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


def _tournament_run(folder: Path, fixtures: tuple, design: str, planted, items=None):  # type: ignore[no-untyped-def]
    """Run `design` with the fake server's judge `sim` planted as `planted`: (its
    tournament rows, calls the server answered, the report's tournament tables, the section)."""
    from analysis.load import load_run
    from analysis.options import AnalysisOptions
    from analysis.tournament_sections import tournament_section
    from simulation.fake_config import FakeConfig
    from simulation.fake_server import serve_in_thread

    with serve_in_thread(FakeConfig(judges={"local-sim": planted}), items=items) as server:
        config = write_experiment(folder, *fixtures, design + fake_judge("sim", "local-sim", server.url))
        summary = run_experiment(config)
        calls = server.stats()["requests"]
    rows = [json.loads(line) for line in Path(summary.results_jsonl).read_text().splitlines()]
    section = tournament_section(load_run(Path(summary.results_jsonl).parent), AnalysisOptions(n_bootstrap=200))
    return [r for r in rows if r["control"] == "tournament"], calls, {t.name: t.rows for t in section.tables}, section


def test_a_tournament_ranks_the_planted_strengths_and_counts_swap_disagreements(tmp_path: Path, prepared_store, corpus_slice_path, corpus_settings) -> None:  # type: ignore[no-untyped-def]
    from simulation.judge import SimJudgeParams

    # strengths needle_mean / 10: none 9.7 > con 7.4 > ner 6.8 > neg 6.2; a first-shown bias of 0.4
    planted = SimJudgeParams(seed=4, order_bias=4.0)
    comparisons, calls, tables, section = _tournament_run(tmp_path, (prepared_store, corpus_slice_path, corpus_settings), DESIGN, planted)
    assert len(comparisons) == 6 * 2 * 8 and {r["prompt_id"] for r in comparisons} == {"closer"}
    assert all(r["status"] == "ok" and r["score"] in (0.0, 50.0, 100.0) for r in comparisons)
    assert calls == len(comparisons) + 4 * 2  # and the judge's own scoring cells (2 documents each)
    ranking = [r.contestant for r in tables["tournament_strengths"]]
    assert ranking[0] == "none" and ranking[-1] == "neg"
    (swap,) = tables["tournament_swaps"]
    assert swap.n == 6 * 8 and 0 < swap.disagreements < swap.n and swap.first_shown_wins > 0.5
    (cost,) = tables["tournament_cost"]
    assert (cost.contestants, cost.comparisons, cost.n, cost.calls_direct) == (4, 6, 96, 4 * 8)
    assert section.figures and section.figures[0].png[:4] == b"\x89PNG"
    assert np.isfinite([r.low for r in tables["tournament_strengths"]]).all()


SMALL_DESIGN = """
seed = 2
needles = ["neg"]
hays = ["orig"]
positions = [[1, 1]]
stopping = { kind = "fixed", n = 1 }
"""


def test_positions_as_contestants_rank_like_the_planted_position_effects(tmp_path: Path, prepared_store, corpus_slice_path, corpus_settings) -> None:  # type: ignore[no-untyped-def]
    from simulation.items import ItemIndex
    from test_analysis_tournament import PLANTED, POSITIONS, position_strengths

    labels = list(POSITIONS.labels())
    table = f'tournament = {{ judges = ["sim"], kind = "positions", needle = "neg", documents = 5, positions = {[list(p) for p in POSITIONS.positions]} }}\n'
    comparisons, calls, tables, section = _tournament_run(tmp_path, (prepared_store, corpus_slice_path, corpus_settings), SMALL_DESIGN + table,
                                                          PLANTED, ItemIndex.from_store(prepared_store))  # fmt: skip
    assert len(comparisons) == 28 * 2 * 5 and {r["prompt_id"] for r in comparisons} == {"closer_pairs"}
    assert {r["needle"] for r in comparisons} == {f"{x}|{y}" for n, x in enumerate(labels) for y in labels[n + 1 :]}
    assert calls == len(comparisons) + 1
    strengths = tables["tournament_strengths"]
    fitted = np.array([next(r.strength for r in strengths if r.contestant == c) for c in labels])
    from analysis.tournament import spearman

    assert spearman(fitted, position_strengths(PLANTED, labels, "neg")) >= 0.9
    (cost,) = tables["tournament_cost"]
    assert (cost.contestants, cost.comparisons, cost.n) == (8, 28, 280)


def test_documents_as_contestants_on_a_sparse_graph_rank_like_the_planted_document_effects(tmp_path: Path, prepared_store, corpus_slice_path, corpus_settings) -> None:  # type: ignore[no-untyped-def]
    from simulation.items import ItemIndex
    from test_analysis_tournament import DOCUMENTS, PLANTED, document_strengths

    from analysis.tournament import spearman

    table = (f'tournament = {{ judges = ["sim"], kind = "documents", entrants = {DOCUMENTS.entrants}, graph = "random", '
             f'degree = {DOCUMENTS.degree}, positions = {[list(p) for p in DOCUMENTS.positions]} }}\n')  # fmt: skip
    comparisons, calls, tables, section = _tournament_run(tmp_path, (prepared_store, corpus_slice_path, corpus_settings), SMALL_DESIGN + table,
                                                          PLANTED, ItemIndex.from_store(prepared_store))  # fmt: skip
    edges = comparison_graph(DOCUMENTS, 2)  # the experiment's seed
    assert len(edges) < 45 and len(comparisons) == len(edges) * 2 * 6  # 3 needles x 2 positions, both orders
    entrants = sorted({d for r in comparisons for d in r["needle"].split("|")})
    assert len(entrants) == 10 and {r["doc_id"] for r in comparisons} <= set(entrants)
    strengths = tables["tournament_strengths"]
    fitted = np.array([next(r.strength for r in strengths if r.contestant == d) for d in entrants])
    assert spearman(fitted, document_strengths(PLANTED, entrants)) >= 0.9
    assert np.isfinite([r.low for r in strengths]).all()


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('kind = "positions", positions = [[1, 1], [2, 2]], prompt = "closer"', "`tournament.prompt`: 'closer' does not fit a tournament of positions (two edits, each with its own original); use 'closer_pairs'"),
        ('kind = "documents", entrants = 500', "`tournament.entrants`: 500 documents asked, but only"),
        ('kind = "positions", positions = [[1, 1], [300, 300]]', "`tournament.positions`: 1 position(s) fit no document of the corpus: [300, 300]"),
    ],
)
def test_a_bad_tournament_of_positions_or_documents_stops_before_any_call(tmp_path: Path, prepared_store, corpus_slice_path, corpus_settings, table: str, message: str, capsys) -> None:  # type: ignore[no-untyped-def]
    from engine.cli import main as cli_main
    from engine.contracts import ConfigError
    from simulation.fake_config import FakeConfig
    from simulation.fake_server import serve_in_thread

    with serve_in_thread(FakeConfig()) as server:
        body = SMALL_DESIGN + f'tournament = {{ judges = ["sim"], {table} }}\n' + fake_judge("sim", "local-sim", server.url)
        config = write_experiment(tmp_path, prepared_store, corpus_slice_path, corpus_settings, body)
        with pytest.raises(ConfigError) as caught:
            run_experiment(config)
        assert str(caught.value).startswith(f"{config.source}: ") and message in str(caught.value)
        capsys.readouterr()
        assert cli_main(["run", config.source]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and "\n" not in err and "Traceback" not in err  # one line
        assert server.stats()["requests"] == 0 and not (tmp_path / "out").exists()
