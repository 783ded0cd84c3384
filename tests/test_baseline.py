"""Offline baseline judges: the measures on hand-computed cases and the adapter
end to end (registry → render with the pair prompt → complete → verdict)."""

from __future__ import annotations

import math

import anyio
import pytest

from adapters.baseline import MEASURES, jaccard_similarity, score_text, sequence_ratio, tfidf_cosine
from engine.registry import create_adapter
from engine.contracts import Adapter, AdapterConfigError, CallRequest, JudgeSpec, Message
from engine.prompts import load_prompt

TEXT = "The bridge opened in 1932. It carries two lanes and a footpath across the river."


@pytest.mark.parametrize("measure", sorted(MEASURES))
def test_identical_texts_score_100_and_disjoint_texts_0(measure):
    similarity = MEASURES[measure]
    assert similarity(TEXT, TEXT) == pytest.approx(100.0)
    assert similarity("abc def", "xyz,uvw") == 0.0  # no shared word, no shared character
    assert similarity("", "") == 100.0
    assert 0.0 <= similarity(TEXT, TEXT.replace("and", "or")) < 100.0


def test_jaccard_hand_computed():
    # {the, cat, sat} vs {the, cat, ran}: 2 shared of 4; case and punctuation ignored
    assert jaccard_similarity("The cat sat.", "the CAT ran") == pytest.approx(50.0)
    assert jaccard_similarity("a a a b", "a b b") == 100.0  # sets, not counts
    assert jaccard_similarity("", "words") == 0.0


def test_sequence_ratio_hand_computed():
    assert sequence_ratio("abcd", "abce") == pytest.approx(100 * 2 * 3 / 8)
    assert sequence_ratio("kitten", "sitting") == pytest.approx(100 * 2 * 4 / 13)  # LCS "ittn"
    # the statistic that difflib's autojunk heuristic would distort: long texts
    # dominated by a few characters
    long_text = "ab " * 400
    assert sequence_ratio(long_text, long_text + "c") == pytest.approx(100 * 2 * 1200 / 2401)


def test_tfidf_hand_computed():
    # vocabulary a, b, c; idf(a) = ln(3/3) + 1 = 1, idf(b) = idf(c) = ln(3/2) + 1
    w = math.log(1.5) + 1
    assert tfidf_cosine("a b", "a c") == pytest.approx(100 * 1 / (1 + w * w))
    # counts matter: (2, 1) · (1, 1) with both terms shared (idf 1)
    assert tfidf_cosine("a a b", "a b") == pytest.approx(100 * 3 / (math.sqrt(5) * math.sqrt(2)))
    assert tfidf_cosine("", "a") == 0.0


@pytest.mark.parametrize(("score", "text"), [(100.00000001, "100"), (-1e-12, "0"), (33.6096927, "33.609693"), (87.5, "87.5"), (50.0, "50")])
def test_score_text_is_a_plain_number_on_0_100(score, text):
    assert score_text(score) == text


def judge(model: str, **options) -> JudgeSpec:
    return JudgeSpec(name=f"base-{model}", adapter="baseline", model=model, options=options)


def complete(adapter: Adapter, request: CallRequest):
    async def run():
        try:
            return await adapter.complete(request)
        finally:
            await adapter.aclose()

    return anyio.run(run)


def request_from(call, spec: JudgeSpec) -> CallRequest:
    return CallRequest(namespace=call.namespace, adapter=spec.adapter, model=spec.model, revision="", messages=call.messages, decoding=call.decoding)


@pytest.mark.parametrize("measure", sorted(MEASURES))
def test_adapter_scores_a_rendered_pair_through_the_pair_prompt(measure):
    spec = judge(measure)
    adapter = create_adapter(spec)
    assert isinstance(adapter, Adapter)
    prompt = load_prompt("pair")
    first, second = "The cat sat on the mat.", "The cat sat on a mat."
    (call,) = prompt.render(first, second)
    result = complete(adapter, request_from(call, spec))
    assert (result.status, result.model_version) == ("ok", f"baseline-{measure}-v1")
    assert result.usage.prompt_tokens == 0 and result.latency_s >= 0 and result.finished_at >= result.started_at
    verdict = prompt.verdict((result,))
    assert verdict.status == "ok"
    assert verdict.score == pytest.approx(MEASURES[measure](first, second), abs=1e-6)


def test_adapter_reads_documents_from_any_of_our_score_prompts():
    spec = judge("jaccard")
    (call,) = load_prompt("bands").render("The cat sat.", "The cat ran.")
    result = complete(create_adapter(spec), request_from(call, spec))
    assert load_prompt("bands").verdict((result,)).score == pytest.approx(50.0)


def test_a_call_without_a_document_pair_is_an_error_not_a_score():
    spec = judge("tfidf")
    request = CallRequest(
        namespace="judge", adapter="baseline", model="tfidf", revision="", messages=(Message("user", "rate this"),), decoding=load_prompt("pair").decoding
    )
    result = complete(create_adapter(spec), request)
    assert (result.status, result.error_kind) == ("error", "bad_request") and "pair" in result.text
    assert load_prompt("pair").verdict((result,)).score is None


def test_unknown_measure_or_options_are_config_errors():
    with pytest.raises(AdapterConfigError, match=r"'cosine'.*jaccard, seqratio, tfidf"):
        create_adapter(judge("cosine"))
    with pytest.raises(AdapterConfigError, match="options"):
        create_adapter(judge("jaccard", window=3))
