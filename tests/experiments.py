"""Experiment configs for the end-to-end tests, over a copy of the session's
prepared store (tests/conftest.py) and its corpus slice: a test writes only
what is its own (design, stopping, judges)."""

from __future__ import annotations

from pathlib import Path

from engine.config import ExperimentConfig, load_config

# The session's corpus (tests/conftest.py) is parsed with en_core_web_sm
# alone, not the default two-model agreement, for speed: these tests only need
# *a* prepared corpus, and the outputs they pin were measured with sm at ner
# scan radius 10. A config over that store names both, or its run would
# prepare again with the defaults.
SESSION_MODEL = "en_core_web_sm"
SESSION_NER_SCAN_RADIUS = 10
SESSION_SETTINGS_TOML = f'model = "{SESSION_MODEL}"\nner_scan_radius = {SESSION_NER_SCAN_RADIUS}\n'  # under [corpus.settings]


def write_experiment(folder: Path, prepared_store, corpus_slice_path: Path, corpus_settings, body: str) -> ExperimentConfig:  # type: ignore[no-untyped-def]
    """`folder/exp.toml`: store (a copy of the prepared one), output and corpus, then `body`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "store").mkdir()
    prepared_store.env.copy(str(folder / "store"))
    head = (
        f'store = "store"\noutput = "out"\n'
        f"corpus = {{ inputs = [{str(corpus_slice_path)!r}], "
        f"settings = {{ min_chars_per_sentence = {corpus_settings.min_chars_per_sentence}, "
        f'model = "{SESSION_MODEL}", ner_scan_radius = {SESSION_NER_SCAN_RADIUS} }} }}\n'
    )
    (folder / "exp.toml").write_text(head + body, encoding="utf-8")
    return load_config(folder / "exp.toml")


def judge_table(name: str, adapter: str, model: str, **settings: object) -> str:
    """One `[[judges]]` table; `settings` as TOML values (str quoted, others as written)."""
    lines = [f"[[judges]]", f"name = {name!r}", f"adapter = {adapter!r}", f"model = {model!r}"]
    lines += [f"{key} = {value!r}" if isinstance(value, str) else f"{key} = {value}" for key, value in settings.items()]
    return "\n".join(lines).replace("'", '"') + "\n"


def fake_judge(name: str, model: str, url: str, concurrency: int = 4) -> str:
    """A judge answered by the fake provider server at `url` (a keyless model id)."""
    return judge_table(name, "openai-compatible", model, base_url=f"{url}/v1", concurrency=concurrency)


def config_error(text: str) -> str:
    """The ConfigError that config text `text` (read as exp.toml) raises, checked to name the file first."""
    from engine.config import parse_config
    from engine.contracts import ConfigError

    try:
        parse_config(text, source="exp.toml")
    except ConfigError as exc:
        message = str(exc)
        assert message.startswith("exp.toml: "), message
        return message
    raise AssertionError("no ConfigError")


# A small design over the session's corpus with one judge on the fake provider
# server (tests/test_calls.py, tests/test_ray_executor.py): 4 cells, the
# stopping table and the judge's extra keys given by the test.
FAKE_KEY_ENV = "NJ_TEST_FAKE_KEY"
SMALL_FAKE_DESIGN = """
seed = {seed}
needles = ["none", "neg"]
hays = ["orig"]
positions = [[0, 0], [2, 2]]
prompts = ["bands"]
[stopping]
{stopping}
[[judges]]
name = "sim"
adapter = "openai-compatible"
model = "sim-judge"
base_url = "{url}/v1"
api_key_env = "NJ_TEST_FAKE_KEY"
concurrency = {concurrency}
{extra}
options = {{ backoff_base_s = 0.01 }}
"""


def small_fake_design(url: str, stopping: str, *, seed: int = 3, concurrency: int = 8, extra: str = "") -> str:
    return SMALL_FAKE_DESIGN.format(url=url, stopping=stopping, seed=seed, concurrency=concurrency, extra=extra)
# the ci rule of that design: 3 of its 4 cells converge within the corpus, over 3+ waves
SMALL_CI = 'kind = "ci"\nepsilon = 20.0\nalpha = 0.2\nmin_docs = 2\nmax_docs = 14'
