"""engine.cli: help and argument errors load no heavy module; config errors name the file."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

import pytest
from experiments import SESSION_SETTINGS_TOML

from engine.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "scipy", "matplotlib", "spacy", "aiohttp", "vllm", "torch", "pyarrow", "engine.run.runner", "adapters.http")

PROBE = """
import json, sys
sys.path.insert(0, {root!r})
from engine.cli import main
try:
    code = main({argv!r})
except SystemExit as exit:
    code = exit.code
print(json.dumps({{"code": code, "heavy": sorted(m for m in {heavy!r} if m in sys.modules)}}))
"""


def probe(argv: list[str], cwd: Path) -> dict:
    """Run the CLI in a fresh interpreter; its exit code and the heavy modules it imported."""
    script = PROBE.format(root=str(ROOT), argv=argv, heavy=HEAVY)
    out = subprocess.run([sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True, check=True, timeout=120)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["run", "--help"],
        ["report", "--help"],
        ["quickstart", "--help"],
        ["run", "--no-such-flag"],
        ["prepare"],  # missing argument
        ["run", "bad.toml"],  # a config error
    ],
)
def test_help_and_argument_errors_import_no_heavy_module(argv: list[str], tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text('store = "s"\noutput = "o"\n[stopping\n', encoding="utf-8")
    result = probe(argv, tmp_path)
    assert result["heavy"] == []
    assert result["code"] == (0 if "--help" in argv else 2)


def write_experiment(tmp_path: Path, prepared_store, corpus_slice_path, corpus_settings, judge: str, n: int = 1) -> Path:  # type: ignore[no-untyped-def]
    """exp.toml in tmp_path: a copy of the prepared store, one position, `judge` (a [[judges]] table)."""
    (tmp_path / "store").mkdir()
    prepared_store.env.copy(str(tmp_path / "store"))
    config = tmp_path / "exp.toml"
    config.write_text(
        f'store = "store"\noutput = "out"\npositions = [[0, 0]]\nneedles = ["neg"]\nhays = ["orig"]\n'
        f"[corpus]\ninputs = [{str(corpus_slice_path)!r}]\n"
        f"[corpus.settings]\nmin_chars_per_sentence = {corpus_settings.min_chars_per_sentence}\n{SESSION_SETTINGS_TOML}"
        f'[stopping]\nkind = "fixed"\nn = {n}\n' + judge,
        encoding="utf-8",
    )
    return config


def test_an_unknown_adapter_names_the_config_file(tmp_path: Path, prepared_store, corpus_slice_path, corpus_settings, capsys) -> None:  # type: ignore[no-untyped-def]
    judge = '[[judges]]\nname = "mystery"\nadapter = "no-such-adapter"\nmodel = "m"\n'
    config = write_experiment(tmp_path, prepared_store, corpus_slice_path, corpus_settings, judge)
    assert cli_main(["run", str(config), "--quiet"]) == 2
    error = capsys.readouterr().err
    assert f"{config}: judge 'mystery': unknown adapter 'no-such-adapter'" in error


BASELINE_JUDGE = '[[judges]]\nname = "seq"\nadapter = "baseline"\nmodel = "seqratio"\n'
PARSER = ("spacy", "engine.corpus.nlp", "torch")  # the parse of a corpus, which only `prepare` (or a changed corpus) needs


@pytest.mark.parametrize("argv", [["run", "exp.toml", "--dry-run"], ["run", "exp.toml", "--quiet"]])
def test_a_run_on_a_prepared_store_never_imports_the_parser(
    argv: list[str], tmp_path: Path, prepared_store, corpus_slice_path, corpus_settings  # type: ignore[no-untyped-def]
) -> None:
    write_experiment(tmp_path, prepared_store, corpus_slice_path, corpus_settings, BASELINE_JUDGE)
    script = PROBE.format(root=str(ROOT), argv=argv, heavy=PARSER + ("engine.run.runner",))
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True, timeout=300)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    # the runner is imported: the probe sees the modules of a run that got as far as its design
    assert result == {"code": 0, "heavy": ["engine.run.runner"]}, out.stderr

GC_PROBE = """
import gc, json, sys
sys.path.insert(0, {root!r})
from engine.cli import main
sys.argv = ["needlejudge"] + {argv!r}
code = main()  # as the console script calls it: the process's own command line
print(json.dumps({{"code": code, "threshold": gc.get_threshold(), "frozen": gc.get_freeze_count()}}))
"""


def test_a_run_collects_young_cycles_less_often_and_freezes_its_start_up(
    tmp_path: Path, prepared_store, corpus_slice_path, corpus_settings  # type: ignore[no-untyped-def]
) -> None:
    from engine.commands.run import GC_YOUNG_THRESHOLD

    write_experiment(tmp_path, prepared_store, corpus_slice_path, corpus_settings, BASELINE_JUDGE, n=2)
    script = GC_PROBE.format(root=str(ROOT), argv=["run", "exp.toml", "--quiet", "--json"])
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True, timeout=300)
    lines = out.stdout.strip().splitlines()
    result = json.loads(lines[-1])
    summary = json.loads("\n".join(lines[:-1]))
    assert result["code"] == 0 and summary["rows"] >= 1
    assert result["threshold"][0] == GC_YOUNG_THRESHOLD > gc.get_threshold()[0]  # this process: CPython's default
    assert result["frozen"] > 1000  # the modules' objects, not collected again


def test_a_run_called_in_process_leaves_the_callers_gc_alone(tmp_path: Path, prepared_store, corpus_slice_path, corpus_settings) -> None:  # type: ignore[no-untyped-def]
    config = write_experiment(tmp_path, prepared_store, corpus_slice_path, corpus_settings, BASELINE_JUDGE)
    threshold, frozen = gc.get_threshold(), gc.get_freeze_count()
    assert cli_main(["run", str(config), "--quiet"]) == 0
    assert (gc.get_threshold(), gc.get_freeze_count()) == (threshold, frozen)
