"""Panels end to end: a panel's member calls are the members' own (0 calls
when they ran, only the new member's when one is added), its rows say who
answered, and a member's terminal failure follows the declared rule."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from engine.config import load_config
from engine.contracts import ConfigError
from engine.run.runner import run_experiment
from experiments import fake_judge, judge_table, write_experiment

DESIGN = """
seed = 3
needles = ["none", "neg"]
hays = ["orig"]
positions = [[1, 1], [0, 2]]
stopping = { kind = "fixed", n = 5 }
"""


def members(url: str) -> str:
    return judge_table("jaccard", "baseline", "jaccard") + fake_judge("sim-a", "local-a", url)


def sim_b(url: str) -> str:
    return fake_judge("sim-b", "local-b", url)


PANEL = """
[[judges]]
name = "panel"
panel = {{ members = [{members}], rule = "{rule}"{extra} }}
"""


def _with_panel(config, url: str, panel_members: str, rule: str = "mean", extra: str = "", judges: str = ""):  # type: ignore[no-untyped-def]
    """The experiment of `config` (same store and output) with these judges and a panel."""
    path = Path(config.source)
    head = path.read_text(encoding="utf-8").split("\nseed = ")[0]
    body = DESIGN + (judges or members(url)) + PANEL.format(members=panel_members, rule=rule, extra=extra)
    path.write_text(head + body, encoding="utf-8")
    return load_config(path)


def _rows(summary) -> list[dict]:  # type: ignore[no-untyped-def]
    return [json.loads(line) for line in Path(summary.results_jsonl).read_text().splitlines()]


@pytest.fixture
def fixtures(prepared_store, corpus_slice_path, corpus_settings):  # type: ignore[no-untyped-def]
    return prepared_store, corpus_slice_path, corpus_settings


def test_a_panel_over_judges_already_run_makes_no_call_and_a_new_member_pays_only_for_itself(tmp_path: Path, fixtures) -> None:  # type: ignore[no-untyped-def]
    from simulation.fake_server import serve_in_thread

    with serve_in_thread() as server:
        members_only = write_experiment(tmp_path / "alone", *fixtures, DESIGN + members(server.url))
        alone = run_experiment(members_only)
        calls_alone = server.stats()["requests"]
        assert calls_alone == 20 and alone.calls_network == 2 * 20  # the baseline's calls are local
        # the same store with a panel of the members that ran: not one new call
        panel_config = _with_panel(members_only, server.url, '"jaccard", "sim-a"')
        with_panel = run_experiment(panel_config, replace=True)  # the config edited in place: a new run in the same output
        assert server.stats()["requests"] == calls_alone and with_panel.calls_network == 0
        rows = [r for r in _rows(with_panel) if r["judge"] == "panel"]
        assert len(rows) == 2 * 2 * 5 and all(r["members"] == ["jaccard", "sim-a"] for r in rows)
        alone_rows = {(r["judge"], r["needle"], r["i"], r["doc_id"]): r for r in _rows(with_panel) if r["judge"] != "panel"}
        for r in rows:
            a, b = alone_rows[("jaccard", r["needle"], r["i"], r["doc_id"])], alone_rows[("sim-a", r["needle"], r["i"], r["doc_id"])]
            assert r["member_scores"] == [a["score"], b["score"]]
            assert r["score"] == pytest.approx((a["score"] + b["score"]) / 2)
            assert r["cache_keys"] == a["cache_keys"] + b["cache_keys"]  # the members' own keys
            assert r["prompt_id"] == "panel" and r["model"] == "panel(jaccard+sim-a)"
        manifest = json.loads((Path(with_panel.results_jsonl).parent / "manifest.json").read_text())
        versions = {p["id"]: p["version"] for p in manifest["prompts"].values()}
        assert manifest["panels"]["panel"]["raters"] == [["jaccard", "pair", versions["pair"]], ["sim-a", "bands", versions["bands"]]]
        assert manifest["panels"]["panel"]["rule"] == "mean"
        # a new judge added as a third member: only its calls go out, once for its own cells and the panel's
        before = server.stats()["by_model"]
        grown = _with_panel(members_only, server.url, '"jaccard", "sim-a", "sim-b"', rule="median", judges=members(server.url) + sim_b(server.url))
        run_experiment(grown, replace=True)
        after = server.stats()["by_model"]
        assert after.get("local-a") == before.get("local-a") and "local-b" not in before
        assert after["local-b"] == 20


TWO_PANELS = """
[[judges]]
name = "strict"
panel = { members = ["sim-a", "sim-b"] }
[[judges]]
name = "lenient"
panel = { members = ["sim-a", "sim-b", "jaccard"], rule = "trimmed_mean", missing = "drop", quorum = 2 }
"""


def test_a_members_terminal_failure_follows_the_declared_rule(tmp_path: Path, fixtures) -> None:  # type: ignore[no-untyped-def]
    from simulation.fake_config import FakeConfig, Fault
    from simulation.fake_server import serve_in_thread

    unparseable = Fault(kind="unparseable", rate=0.3, models="local-b")
    with serve_in_thread(FakeConfig(faults=(unparseable,))) as server:
        judges = members(server.url) + sim_b(server.url) + TWO_PANELS
        summary = run_experiment(write_experiment(tmp_path, *fixtures, DESIGN + judges))
    rows = _rows(summary)
    by_item = {(r["judge"], r["needle"], r["i"], r["doc_id"]): r for r in rows}
    failed_b = {k[1:] for k, r in by_item.items() if k[0] == "sim-b" and r["status"] == "unparseable"}
    strict = {k[1:]: r for k, r in by_item.items() if k[0] == "strict"}
    lenient = {k[1:]: r for k, r in by_item.items() if k[0] == "lenient"}
    assert failed_b & set(strict) and failed_b & set(lenient), "the planted fault hit no panel item"
    for item, row in strict.items():
        if item in failed_b:
            assert row["status"] == "unparseable" and row["score"] is None and "member sim-b" in row["error_kind"]
        else:
            assert row["status"] == "ok" and row["members"] == ["sim-a", "sim-b"]
    for item, row in lenient.items():
        assert row["status"] == "ok"
        if item in failed_b:
            assert row["members"] == ["sim-a", "jaccard"]
            assert row["score"] == pytest.approx(sum(row["member_scores"]) / 2)  # two answered: nothing to trim
        else:
            assert row["members"] == ["sim-a", "sim-b", "jaccard"]
            assert row["score"] == pytest.approx(sorted(row["member_scores"])[1])  # trimmed mean of 3: the median


def test_a_rule_that_does_not_fit_the_members_scale_is_a_config_error_before_anything_runs(tmp_path: Path, fixtures) -> None:  # type: ignore[no-untyped-def]
    from engine.cli import main as cli_main

    judges = judge_table("jaccard", "baseline", "jaccard") + fake_judge("unused", "local-unused", "http://127.0.0.1:9")
    body = DESIGN + judges + PANEL.format(members='"jaccard", "unused"', rule="majority", extra="")
    config = write_experiment(tmp_path, *fixtures, body)
    with pytest.raises(ConfigError) as caught:
        run_experiment(config)
    message = str(caught.value)
    assert message.startswith(f"{config.source}: `judges[2]` ('panel'): `panel.rule`: majority needs a categorical scale (whole numbers, at most 11 levels); the members answer on '0-100'")
    assert not (tmp_path / "out").exists()
    assert cli_main(["run", config.source]) == 2  # the CLI says it without a traceback


CASCADE = """
[[judges]]
name = "cascade"
panel = { members = ["sim-a", "sim-b", "sim-c"], cascade = { boundaries = [70.0], margin = 8.0, escalate_needles = ["none"] } }
"""
FULL = """
[[judges]]
name = "full"
panel = { members = ["sim-a", "sim-b", "sim-c"] }
"""


def _members_only_in_panels(url: str) -> str:
    return "".join(fake_judge(f"sim-{x}", f"local-{x}", url).replace("concurrency", "alone = false\nconcurrency") for x in "abc")


def test_a_cascade_asks_the_next_members_only_near_a_boundary(tmp_path: Path, fixtures) -> None:  # type: ignore[no-untyped-def]
    from simulation.fake_config import FakeConfig
    from simulation.fake_server import serve_in_thread
    from simulation.judge import SimJudgeParams

    judges = {f"local-{x}": SimJudgeParams(seed=seed) for seed, x in enumerate("abc")}  # three judges that disagree
    with serve_in_thread(FakeConfig(judges=judges)) as server:
        config = write_experiment(tmp_path, *fixtures, DESIGN + _members_only_in_panels(server.url) + CASCADE)
        summary = run_experiment(config)
        by_model = server.stats()["by_model"]
        rows = _rows(summary)
        assert {r["judge"] for r in rows} == {"cascade"}  # the members have no cells of their own
        settled = [r for r in rows if r["members"] == ["sim-a"]]
        escalated = [r for r in rows if r["members"] == ["sim-a", "sim-b", "sim-c"]]
        assert len(settled) + len(escalated) == len(rows) == 20 and settled and escalated
        assert all(abs(r["member_scores"][0] - 70.0) > 8.0 and r["score"] == r["member_scores"][0] for r in settled)
        # needle none is declared unreliable for the first member: always escalated
        assert all(abs(r["member_scores"][0] - 70.0) <= 8.0 for r in escalated if r["needle"] != "none")
        assert all(r["needle"] == "neg" for r in settled) and sum(r["needle"] == "none" for r in escalated) == 10
        assert all(len(r["cache_keys"]) == len(r["members"]) for r in rows)
        # the calls made are the cascade's: the first member every time, the others only when escalated
        assert by_model["local-a"] == 20 and by_model["local-b"] == by_model["local-c"] == len(escalated)
        # the full panel over the same members: it pays only for the calls the cascade saved
        path = Path(config.source)
        path.write_text(path.read_text(encoding="utf-8") + FULL, encoding="utf-8")
        run_experiment(load_config(path), replace=True)
        after = server.stats()["by_model"]
        assert after["local-a"] == 20 and after["local-b"] == after["local-c"] == 20
        # the report's cascade table: what it saved, and its agreement with the full panel
        from analysis.cascade import cascade_table
        from analysis.options import AnalysisOptions

        manifest = json.loads((Path(summary.results_jsonl).parent / "manifest.json").read_text())
        (row,) = cascade_table(Path(summary.results_jsonl).parent, manifest, AnalysisOptions(n_bootstrap=100))
        assert (row.n, row.n_settled, row.calls_made, row.calls_full) == (20, len(settled), 20 + 2 * len(escalated), 60)
        assert row.saved_share == pytest.approx(2 * len(settled) / 60) and row.full_from == "panel full" and row.n_compared == 20
        assert 0 < row.alpha < 1 and row.mean_abs_diff > 0  # settled items differ from the full panel by the other members
        # the members have no rows of their own: their agreement comes from the panels' member scores
        from analysis.agreement import panel_agreement_from_rows
        from analysis.cascade import read_panel_rows

        panel_rows = read_panel_rows(Path(summary.results_jsonl).parent, {"full", "cascade"})
        within = {w.judge: w for w in panel_agreement_from_rows(panel_rows, manifest["panels"], AnalysisOptions(n_bootstrap=100))}
        assert within["full"].n == 20 and within["cascade"].n == len(escalated)
        full_rows = [r for r in panel_rows if r.judge == "full"]
        assert all(r.members == ("sim-a", "sim-b", "sim-c") for r in full_rows) and -1 <= within["full"].alpha <= 1
        from analysis.load import load_run
        from analysis.panel_sections import agreement_section

        section = agreement_section(load_run(Path(summary.results_jsonl).parent), AnalysisOptions(n_bootstrap=50))
        tables = {t.name: t.rows for t in section.tables}
        assert {r.judge for r in tables["panel_agreement"]} == {"cascade", "full"} and len(tables["panel_cascades"]) == 1
        assert any(f.startswith("Cascade cascade: the first member settled") for f in section.findings)


def test_the_dry_run_prices_a_panels_calls_at_its_members_prices(tmp_path: Path, fixtures) -> None:  # type: ignore[no-untyped-def]
    from engine.run.plan import plan_experiment

    judges = (judge_table("jaccard", "baseline", "jaccard") + fake_judge("sim-a", "local-a", "http://127.0.0.1:9")
              + "prices = { input = 1000.0, output = 0.0 }\n")  # fmt: skip
    alone = plan_experiment(write_experiment(tmp_path / "alone", *fixtures, DESIGN + judges))
    both = plan_experiment(write_experiment(tmp_path / "panel", *fixtures, DESIGN + judges + PANEL.format(members='"jaccard", "sim-a"', rule="mean", extra="")))
    # the panel asks sim-a the same calls again (shared at run time; the bound counts them): twice the cost
    assert alone.upper_bound_cost_usd > 0 and both.upper_bound_cost_usd == pytest.approx(2 * alone.upper_bound_cost_usd)


MEASURED = """
[[judges]]
name = "cascade"
panel = {{ members = ["sim-a", "sim-b", "sim-c"], cascade = {{ boundaries = [50.0], margin = 5.0, max_ci_width = 20.0, block = {block} }} }}
"""
LONGER = DESIGN.replace("n = 5", "n = 14")  # every document of the test corpus: 3 blocks of 5, 5 and 4


def test_a_measured_cascade_flags_its_first_member_where_it_is_noisy_and_a_rerun_makes_no_call(tmp_path: Path, fixtures) -> None:  # type: ignore[no-untyped-def]
    from analysis.cascade import cascade_cells, cascade_table
    from analysis.options import AnalysisOptions
    from simulation.fake_config import FakeConfig
    from simulation.fake_server import serve_in_thread
    from simulation.judge import SimJudgeParams

    # the first member is noisy on neg items only (sd 40 against 3, no snapping to band edges): its CI
    # there is wider than 20 points after 5 scores (a chance of ~0.3%), on none items narrower (~0.6%)
    quiet = SimJudgeParams(seed=0, noise_sd=3.0, band_snap_prob=0.0)
    judges = {"local-a": msgspec.structs.replace(quiet, noise_sd_by_needle={"neg": 40.0})} | {f"local-{x}": SimJudgeParams(seed=n) for n, x in enumerate("bc", 1)}
    with serve_in_thread(FakeConfig(judges=judges)) as server:
        config = write_experiment(tmp_path, *fixtures, LONGER + _members_only_in_panels(server.url) + MEASURED.format(block=5))
        summary = run_experiment(config)
        first_calls = server.stats()["requests"]
        rows = _rows(summary)
        assert len(rows) == 4 * 14 and {r["judge"] for r in rows} == {"cascade"}
        everyone = ["sim-a", "sim-b", "sim-c"]
        for r in rows:
            block = r["doc_index"] // 5
            if block == 0 or r["needle"] == "neg":  # no scores yet, or flagged: every member asked
                assert r["members"] == everyone, r
            else:  # none items score ~97, far from 50: the first member settles them
                assert r["members"] == ["sim-a"], r
        assert server.stats()["by_model"]["local-a"] == 56 and server.stats()["by_model"]["local-b"] == 2 * 14 + 2 * 5
        # the report recomputes the flags from the rows: flagged in the neg cells' later blocks, not in the none cells'
        out = Path(summary.results_jsonl).parent
        manifest = json.loads((out / "manifest.json").read_text())
        cells = {(c.needle, c.i, c.j): c for c in cascade_cells(out, manifest)}
        assert len(cells) == 4
        for (needle, _, _), c in cells.items():
            assert (c.blocks, c.flagged_blocks) == (3, 3 if needle == "neg" else 1), c
            assert (min(c.widest, c.last_width) > 20.0 if needle == "neg" else c.widest < 20.0), c
        (row,) = cascade_table(out, manifest, AnalysisOptions(n_bootstrap=100))
        from analysis.load import load_run
        from analysis.panel_sections import agreement_section

        section = agreement_section(load_run(out), AnalysisOptions(n_bootstrap=50))
        assert any(f.startswith("Cascade cascade: its first member's running CI was too wide (every member asked) after the first block "
                                "in 2 of 4 cells: neg/orig/(0,2), neg/orig/(1,1)") for f in section.findings), section.findings  # fmt: skip
        assert len(next(t.rows for t in section.tables if t.name == "panel_cascade_flags")) == 4
        assert (row.calls_made, row.calls_full) == (56 + 2 * 38, 168) and row.saved_share == pytest.approx(2 * 18 / 168)
        # an interrupted run resumes with the same decisions (the flags of block 1 come from replayed rows),
        # and a re-run over the same cache makes them again: 0 new calls, the same rows
        from engine.cache.store import Store
        from engine.run.results import drop_rows_from

        with Store(config.store) as store:
            assert sum(drop_rows_from(store, bytes.fromhex(summary.run_id), cell_no, 7) for cell_no in range(4)) == 4 * 7
        for replace in (False, True):
            run_experiment(load_config(Path(config.source)), replace=replace)
            assert server.stats()["requests"] == first_calls
            again = _rows(summary)
            assert [(r["members"], r["score"]) for r in again] == [(r["members"], r["score"]) for r in rows]
        # beside the full panel (it pays only for the calls the cascade saved): the cascade's agreement with it
        path = Path(config.source)
        path.write_text(path.read_text(encoding="utf-8") + FULL, encoding="utf-8")
        run_experiment(load_config(path), replace=True)
        assert server.stats()["requests"] == first_calls + 2 * 18
        manifest = json.loads((out / "manifest.json").read_text())
        (row,) = cascade_table(out, manifest, AnalysisOptions(n_bootstrap=100))
        assert row.full_from == "panel full" and row.n_compared == 56 and row.saved_share == pytest.approx(2 * 18 / 168)
        assert 0.5 < row.alpha < 1 and row.mean_abs_diff > 0  # settled none items differ only by the other members' few points


@pytest.mark.parametrize(
    ("cascade", "message"),
    [
        ("max_ci_width = 0.0", "`panel.cascade.max_ci_width`: expected a width in points, > 0 and <= 100, got 0.0"),
        ("max_ci_width = 10.0, block = 1", "`panel.cascade.block`: expected at least 2 documents per block"),
        ("max_ci_width = 10.0, confidence = 1.5", "`panel.cascade.confidence`: expected a level between 0 and 1"),
        ("block = 5", "`panel.cascade.block` applies only with `max_ci_width`"),
    ],
)
def test_a_bad_measured_cascade_is_a_config_error_naming_the_key(cascade: str, message: str, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from engine.cli import main as cli_main
    from experiments import config_error

    body = 'store = "s"\noutput = "o"\n' + members("http://127.0.0.1:9") + sim_b("http://127.0.0.1:9")
    body += '[[judges]]\nname = "panel"\npanel = { members = ["sim-a", "sim-b"], cascade = { boundaries = [50.0], ' + cascade + " } }\n"
    assert f"`judges[3]` ('panel'): {message}" in config_error(body)
    (tmp_path / "exp.toml").write_text(body, encoding="utf-8")
    assert cli_main(["run", str(tmp_path / "exp.toml")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and not (tmp_path / "s").exists() and not (tmp_path / "o").exists()  # one line, nothing made
