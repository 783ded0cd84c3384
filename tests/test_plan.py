"""engine.run.plan (`needlejudge run --dry-run`): it makes every check the run
makes before its first call, one test per check, each failing the dry run
exactly as it fails the run (same message, naming the config file once)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.cli import main as cli_main
from engine.run.runner import plan_experiment, run_experiment
from experiments import write_experiment

DESIGN = """
seed = 3
needles = ["none", "neg"]
hays = ["orig"]
positions = [[1, 1]]
[stopping]
kind = "fixed"
n = 3
"""
JACCARD = '[[judges]]\nname = "jaccard"\nadapter = "baseline"\nmodel = "jaccard"\n'


def judge(name: str, adapter: str, model: str, extra: str = "") -> str:
    return f'[[judges]]\nname = "{name}"\nadapter = "{adapter}"\nmodel = "{model}"\n{extra}'


@pytest.fixture
def experiment(tmp_path: Path, prepared_store, corpus_slice_path, corpus_settings):  # type: ignore[no-untyped-def]
    """experiment(judges) -> the path of a config over a copy of the session's store."""

    def make(judges: str, folder: str = "exp") -> str:
        return write_experiment(tmp_path / folder, prepared_store, corpus_slice_path, corpus_settings, DESIGN + judges).source

    return make


def dry_run_and_run(config: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, int, str]:
    """(exit code, stderr) of `run --dry-run`, then of `run --quiet`."""
    dry = cli_main(["run", config, "--dry-run"])
    dry_err = capsys.readouterr().err
    real = cli_main(["run", config, "--quiet"])
    return dry, dry_err, real, capsys.readouterr().err


def test_an_unknown_baseline_model_fails_the_dry_run_as_it_fails_the_run(experiment, capsys) -> None:  # type: ignore[no-untyped-def]
    config = experiment(JACCARD + judge("typo", "baseline", "jacard"))
    dry, dry_err, real, real_err = dry_run_and_run(config, capsys)
    assert dry == real == 2
    assert "judge 'typo': adapter 'baseline' has no model 'jacard'" in dry_err
    assert dry_err == real_err
    assert dry_err.count("exp.toml") == 1, dry_err  # not "exp.toml: exp.toml: ..."
    assert "Traceback" not in dry_err


def test_an_unknown_adapter_fails_the_dry_run_as_it_fails_the_run(experiment, capsys) -> None:  # type: ignore[no-untyped-def]
    config = experiment(JACCARD + judge("odd", "openia", "gpt-4o-mini"))
    dry, dry_err, real, real_err = dry_run_and_run(config, capsys)
    assert dry == real == 2
    assert "judge 'odd': unknown adapter 'openia'" in dry_err and dry_err == real_err
    assert dry_err.count("exp.toml") == 1, dry_err


def test_a_missing_api_key_fails_the_dry_run_as_it_fails_the_run(experiment, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = experiment(JACCARD + judge("gpt", "openai", "gpt-4o-mini", "prices = { input = 0.15, output = 0.6 }\n"))
    dry, dry_err, real, real_err = dry_run_and_run(config, capsys)
    assert dry == real == 2
    assert "judge 'gpt': no API key: set the environment variable OPENAI_API_KEY" in dry_err and dry_err == real_err
    assert dry_err.count("exp.toml") == 1, dry_err


def test_batch_mode_without_a_batch_api_fails_the_dry_run_as_it_fails_the_run(experiment, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "not-a-real-key")
    from engine import registry

    # the message lists the backends with a batch API, importing each: only
    # the product's (a site-packages `tests` package can shadow the test ones')
    product = {name: target for name, target in registry.BACKENDS.items() if not target.startswith("tests.")}
    monkeypatch.setattr(registry, "BACKENDS", product)
    extra = 'mode = "batch"\nbase_url = "https://example.invalid"\n'
    config = experiment(judge("az", "azure", "gpt-4o-mini", extra))
    dry, dry_err, real, real_err = dry_run_and_run(config, capsys)
    assert dry == real == 2
    assert "judge 'az': mode = \"batch\" but adapter 'azure' has no batch API" in dry_err and dry_err == real_err


def test_a_bad_option_fails_the_dry_run_as_it_fails_the_run(experiment, capsys) -> None:  # type: ignore[no-untyped-def]
    config = experiment(judge("sim", "openai-compatible", "m", 'base_url = "http://127.0.0.1:9/v1"\noptions = { colour = "red" }\n'))
    dry, dry_err, real, real_err = dry_run_and_run(config, capsys)
    assert dry == real == 2
    assert "judge 'sim': unknown option(s) colour" in dry_err and dry_err == real_err


def test_a_billed_judge_without_prices_has_an_unknown_cost(experiment, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-real-key")
    config = experiment(
        JACCARD
        + judge("free", "openai", "gpt-4o-mini")
        + judge("paid", "openai", "gpt-4o", "prices = { input = 2.5, output = 10.0 }\n")
    )
    assert cli_main(["run", config, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "cost unknown: no prices for judge free" in out
    assert "for judge paid" not in out and "for judge jaccard" not in out  # priced, and run on this machine
    assert "cost upper bound: $" in out and "for the other judges" in out
    from engine.config import load_config

    plan = plan_experiment(load_config(config))
    assert plan.unpriced_judges == ["free"]
    assert plan.upper_bound_cost_usd > 0  # the priced judge's bound stays


def test_only_local_judges_need_no_prices(experiment, capsys) -> None:  # type: ignore[no-untyped-def]
    config = experiment(JACCARD)
    assert cli_main(["run", config, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "cost unknown" not in out and "cost upper bound: $0.00 (" in out


def test_a_run_does_not_replace_another_runs_results_unless_told(experiment, capsys) -> None:  # type: ignore[no-untyped-def]
    from engine.config import load_config

    config = experiment(JACCARD)
    first = run_experiment(load_config(config))
    again = run_experiment(load_config(config))  # the same run again: its own results, no question
    assert again.run_id == first.run_id
    out = Path(first.output)
    before = {name: (out / name).read_bytes() for name in ("results.jsonl", "manifest.json")}
    # edit the config in place, as the quickstart's last lines suggest
    Path(config).write_text(Path(config).read_text().replace('model = "jaccard"', 'model = "tfidf"'))
    dry, dry_err, real, real_err = dry_run_and_run(config, capsys)
    assert dry == real == 2
    assert f"holds the results of run {first.run_id}" in real_err and "--replace" in real_err
    assert len(real_err.strip().splitlines()) == 1 and dry_err == real_err
    assert {name: (out / name).read_bytes() for name in before} == before  # nothing replaced
    assert cli_main(["run", config, "--quiet", "--replace"]) == 0
    capsys.readouterr()
    assert (out / "manifest.json").read_bytes() != before["manifest.json"]
    assert first.run_id not in (out / "results.jsonl").read_text()


def test_a_dry_run_that_prepares_the_corpus_again_says_so(experiment, corpus_slice_path, capsys) -> None:  # type: ignore[no-untyped-def]
    import json

    config = Path(experiment(JACCARD))
    # the store holds the session's corpus; these inputs differ (a third of its articles), so it is prepared again
    smaller = config.parent / "smaller.json"
    smaller.write_text(json.dumps(json.loads(corpus_slice_path.read_text(encoding="utf-8"))[-7:]), encoding="utf-8")
    config.write_text(config.read_text().replace(repr(str(corpus_slice_path)), repr(str(smaller))))
    assert cli_main(["run", str(config), "--dry-run"]) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("corpus:")]
    assert line.startswith("corpus: prepared again by this dry run in ") and "the run will reuse it" in line
    assert cli_main(["run", str(config), "--dry-run"]) == 0  # the store now holds it
    assert "corpus:" not in capsys.readouterr().out
