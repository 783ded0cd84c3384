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
