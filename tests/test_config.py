"""engine.config: TOML → typed, validated ExperimentConfig; errors name file, key and expectation."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.config import load_config, parse_config
from engine.contracts import ConfigError, JudgeSpec

JUDGE = """
[[judges]]
name = "gpt"
adapter = "openai"
model = "gpt-4o-mini-2024-07-18"
"""


def write(tmp_path: Path, text: str, name: str = "exp.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_minimal_config_gets_the_papers_defaults_and_resolves_paths_against_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "experiments"
    folder.mkdir()
    path = write(folder, 'store = "store"\noutput = "../out/run1"\n[corpus]\ninputs = ["wiki.json"]\n' + JUDGE)
    config = load_config(path)
    assert config.source == str(path)
    assert config.store == str((folder / "store").resolve())
    assert config.output == str((tmp_path / "out" / "run1").resolve())
    assert config.corpus.inputs == (str((folder / "wiki.json").resolve()),)
    assert config.needles == ("none", "neg", "con", "ner")
    assert config.hays == ("orig", "rand")
    positions = config.position_list()
    assert len(positions) == 100 and positions[0] == (0, 0) and positions[-1] == (9, 9)
    assert config.stopping.kind == "paper"
    judge = config.judges[0]
    assert config.judge_prompts(judge) == ("bands",)
    spec = judge.spec()
    assert type(spec) is JudgeSpec and spec.model == "gpt-4o-mini-2024-07-18"


def test_positions_k_and_prompt_overrides(tmp_path: Path) -> None:
    text = """
store = "s"
output = "o"
k = 2
prompts = ["bands", "sts"]
[[judges]]
name = "a"
adapter = "openai"
model = "m"
prompts = ["nobands"]
[[judges]]
name = "b"
adapter = "baseline"
model = "jaccard"
[[judges]]
name = "c"
adapter = "anthropic"
model = "claude"
"""
    config = parse_config(text, source="x.toml", base_dir=tmp_path)
    assert config.position_list() == tuple((i, j) for i in range(3) for j in range(3))
    a, b, c = config.judges
    assert config.judge_prompts(a) == ("nobands",)
    assert config.judge_prompts(b) == ("pair",)  # baseline judges default to the plain pair prompt
    assert config.judge_prompts(c) == ("bands", "sts")
    explicit = parse_config('store="s"\noutput="o"\npositions=[[0,0],[3,1]]\n' + JUDGE, base_dir=tmp_path)
    assert explicit.position_list() == ((0, 0), (3, 1))
    assert explicit.check_position() == (3, 1)


def test_prompt_files_resolve_but_builtin_names_do_not(tmp_path: Path) -> None:
    config = parse_config('store="s"\noutput="o"\nprompts=["bands", "mine.toml"]\n' + JUDGE, base_dir=tmp_path)
    assert config.prompts == ("bands", str((tmp_path / "mine.toml").resolve()))


@pytest.mark.parametrize(
    "text, expected",
    [
        ('store="s"\noutput="o"\nsed = 1\n' + JUDGE, ["exp.toml", "sed"]),
        ('store="s"\noutput="o"\n' + JUDGE + "concurency = 4\n", ["exp.toml", "concurency", "judges[0]"]),
        ('store="s"\noutput="o"\n' + JUDGE + 'concurrency = "many"\n', ["exp.toml", "judges[0].concurrency", "int"]),
        ('store="s"\noutput="o"\n' + JUDGE + "concurrency = 0\n", ["exp.toml", "concurrency", ">= 1"]),
        ('store="s"\noutput="o"\nk = -1\n' + JUDGE, ["exp.toml", "`k`", ">= 0"]),
        ('store="s"\noutput="o"\nreplicates = 0\n' + JUDGE, ["exp.toml", "replicates", ">= 1"]),
        ('store="s"\noutput="o"\nneedles = ["neg", "foo"]\n' + JUDGE, ["exp.toml", "needles[1]", "neg"]),
        ('store="s"\noutput="o"\nneedles = ["neg", "neg"]\n' + JUDGE, ["exp.toml", "needles", "duplicate"]),
        ('store="s"\noutput="o"\nk = 3\npositions = [[0, 0]]\n' + JUDGE, ["exp.toml", "either `k` or `positions`"]),
        ('store="s"\noutput="o"\n' + JUDGE + JUDGE, ["exp.toml", "judges[1]", "duplicate judge name"]),
        ('store="s"\noutput="o"\n', ["exp.toml", "judges"]),
        ('output="o"\n' + JUDGE, ["exp.toml", "store"]),
        ('store="s"\noutput="o"\n[stopping]\nkind = "ci"\nepsilon = 0\n' + JUDGE, ["exp.toml", "stopping", "epsilon"]),
        ('store="s"\noutput="o"\n[stopping]\nkind = "bayes"\n' + JUDGE, ["exp.toml", "stopping.kind", "paper"]),
        ('store="s"\noutput="o"\n[checks]\norder_swap = -2\n' + JUDGE, ["exp.toml", "checks.order_swap", ">= 0"]),
        ('store="s"\noutput="o"\nk = 2\n[checks]\nposition = [5, 5]\n' + JUDGE, ["exp.toml", "checks.position", "[5, 5]"]),
        ('store="s"\noutput="o"\n[corpus.settings]\nmin_sentence = 3\n' + JUDGE, ["exp.toml", "corpus.settings", "min_sentence"]),
        (
            'store="s"\noutput="o"\n[corpus.settings]\nmin_chars_per_sentence = 900\nmax_chars_per_sentence = 100\n' + JUDGE,
            ["exp.toml", "corpus.settings", "min_chars_per_sentence"],
        ),
        ('store="s"\noutput="o"\nsource = "x"\n' + JUDGE, ["exp.toml", "source", "reserved"]),
        ('store = "s\noutput="o"\n', ["exp.toml", "invalid TOML", "line 1, column"]),
        ('store="s"\noutput="o"\n[stopping\nkind = "ci"\n' + JUDGE, ["exp.toml", "invalid TOML", "line 3, column 10"]),
        ('store="s"\noutput="o"\n[stopping]\nkind = "bayes"\n' + JUDGE, ["'paper', 'fixed', 'ci'"]),
        (
            'store="s"\noutput="o"\n[stopping]\nkind = "paper"\nepsilon = 2.0\n' + JUDGE,
            ["exp.toml", "`stopping`", "unknown field `epsilon`", "a paper rule takes kind, min_docs, max_docs, window, tolerance"],
        ),
        ('store="s"\noutput="o"\n[stopping]\nwindow = 0\n' + JUDGE, ["exp.toml", "stopping.window", ">= 1"]),
        ('store="s"\noutput="o"\n' + JUDGE + "rpm = -5\n", ["exp.toml", "rpm", "> 0"]),
        ('store="s"\noutput="o"\n' + JUDGE + "prompts = []\n", ["exp.toml", "prompts", "non-empty"]),
        ('store="s"\noutput="o"\n[failures]\nmax_outage_s = 0\n' + JUDGE, ["exp.toml", "failures.max_outage_s", "> 0"]),
        ('store="s"\noutput="o"\n[failures]\nmax_outage_s = "5m"\n' + JUDGE, ["exp.toml", "failures.max_outage_s", "float"]),
        ('store="s"\noutput="o"\n[failures]\nconsecutive_failures = 0\n' + JUDGE, ["exp.toml", "failures.consecutive_failures", ">= 1"]),
        ('store="s"\noutput="o"\n[failures]\nmax_outage = 60\n' + JUDGE, ["exp.toml", "failures", "max_outage"]),
    ],
)
def test_bad_configs_name_the_file_the_key_and_what_was_expected(tmp_path: Path, text: str, expected: list[str]) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    for fragment in expected:
        assert fragment in message, f"{fragment!r} not in {message!r}"


def test_stopping_table_decodes_into_its_rules_struct(tmp_path: Path) -> None:
    from engine.stopping.spec import CiSpec, FixedSpec, PaperSpec

    def stopping(table: str):
        return load_config(write(tmp_path, 'store="s"\noutput="o"\n' + table + JUDGE)).stopping

    assert stopping("") == PaperSpec()
    assert stopping("[stopping]\nwindow = 5\n") == PaperSpec(window=5)  # kind defaults to paper
    assert stopping('[stopping]\nkind = "fixed"\nn = 30\n') == FixedSpec(n=30)
    assert stopping('[stopping]\nkind = "ci"\nepsilon = 3.0\nmethod = "eb"\n') == CiSpec(epsilon=3.0, method="eb")


def test_missing_file_and_non_utf8_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nope.toml: cannot read config"):
        load_config(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b"store = '\xff'\n")
    with pytest.raises(ConfigError, match="bad.toml: not UTF-8"):
        load_config(bad)
