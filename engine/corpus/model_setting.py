"""What the corpus `model` setting names, without loading spaCy: one model,
or two joined by "+" for two-model agreement (engine.corpus.nlp.AgreedParser).
engine.corpus.nlp loads them; engine.corpus.prepare fingerprints their packages."""

from __future__ import annotations

from engine.contracts import ConfigError

AGREEMENT_SEPARATOR = "+"


def model_names(setting: str) -> tuple[str, ...]:
    """The models a `model` setting names: one, or two joined by "+" (agreement)."""
    names = tuple(n.strip() for n in setting.split(AGREEMENT_SEPARATOR))
    if not all(names) or len(names) > 2 or len(set(names)) != len(names):
        raise ConfigError(
            f"model = {setting!r}: expected one spaCy model name, or two different ones joined by "
            f"{AGREEMENT_SEPARATOR!r} for two-model agreement (e.g. 'en_core_web_sm+en_core_web_md')"
        )
    return names
