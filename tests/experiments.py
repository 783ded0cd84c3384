"""Experiment configs for the end-to-end tests, over a copy of the session's
prepared store (tests/conftest.py) and its corpus slice: a test writes only
what is its own (design, stopping, judges)."""

from __future__ import annotations

from pathlib import Path

from engine.config import ExperimentConfig, load_config


def write_experiment(folder: Path, prepared_store, corpus_slice_path: Path, corpus_settings, body: str) -> ExperimentConfig:  # type: ignore[no-untyped-def]
    """`folder/exp.toml`: store (a copy of the prepared one), output and corpus, then `body`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "store").mkdir()
    prepared_store.env.copy(str(folder / "store"))
    head = (
        f'store = "store"\noutput = "out"\n'
        f"corpus = {{ inputs = [{str(corpus_slice_path)!r}], "
        f"settings = {{ min_chars_per_sentence = {corpus_settings.min_chars_per_sentence} }} }}\n"
    )
    (folder / "exp.toml").write_text(head + body, encoding="utf-8")
    return load_config(folder / "exp.toml")
