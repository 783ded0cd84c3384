"""The score parser against a corpus of realistic responses and by properties."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.prompts.parse import parse_score
from engine.prompts.scales import BUILTIN_SCALES, parse_scale

CORPUS = [json.loads(line) for line in (Path(__file__).parent / "data" / "raw_responses.jsonl").read_text().splitlines()]
SCALE_0_100 = BUILTIN_SCALES["0-100"]


def test_corpus_is_large_and_covers_every_outcome():
    assert len(CORPUS) >= 40
    assert {row["status"] for row in CORPUS} == {"ok", "unparseable", "refused"}


@pytest.mark.parametrize("row", CORPUS, ids=[row["note"] for row in CORPUS])
def test_corpus_response(row):
    scale = parse_scale(row["scale"])
    verdict = parse_score(row["text"], scale)
    assert verdict.status == row["status"], verdict.detail
    assert verdict.scale == scale.name
    if row["status"] == "ok":
        assert verdict.raw_score == pytest.approx(row["raw_score"])
        assert verdict.score == pytest.approx(100 * (row["raw_score"] - scale.low) / (scale.high - scale.low))
        assert verdict.detail == ""
    else:
        assert verdict.score is None and verdict.raw_score is None
        assert row["detail_contains"] in verdict.detail


@pytest.mark.parametrize(
    ("text", "expected"),
    [("87", 87.0), ("87.25", 87.25), (" 100\n", 100.0), ("0", 0.0)],
)
def test_number_mode_accepts_plain_numbers(text, expected):
    verdict = parse_score(text, SCALE_0_100, mode="number")
    assert (verdict.status, verdict.raw_score) == ("ok", expected)


@pytest.mark.parametrize("text", ["Score: 87", "87/100", "**87**", "", "eighty", "87 87", "101"])
def test_number_mode_rejects_anything_else(text):
    verdict = parse_score(text, SCALE_0_100, mode="number")
    assert verdict.status == "unparseable" and verdict.score is None


ANSWER_FORMS = [
    "{n}",
    "{n}.",
    "**{n}**",
    "Score: {n}",
    "score:{n}",
    "**Score:** {n}",
    "Final score: {n}/{high}",
    "Similarity score = {n}",
    "The score is {n}.",
    '{{"score": {n}}}',
    '```json\n{{"score": {n}}}\n```',
    '{{"reasoning": "short", "similarity_score": {n}}}',
    "{n}\n\nThe documents differ in one sentence.",
    "{n} - nearly the same meaning",
    "Score: {n} (see above)",
]
# Reasoning without digits: whatever it says, it names no number.
REASONING = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Nd", "No", "Nl"), exclude_characters="{}<>`−"),
    max_size=200,
)


@settings(deadline=None)
@given(n=st.integers(0, 100), form=st.sampled_from(ANSWER_FORMS))
def test_any_in_range_integer_in_any_accepted_form_parses_back(n, form):
    verdict = parse_score(form.format(n=n, high=100), SCALE_0_100)
    assert (verdict.status, verdict.raw_score, verdict.score) == ("ok", float(n), float(n))


@settings(deadline=None)
@given(scale_name=st.sampled_from(["1-7", "-3..3", "0-100"]), data=st.data())
def test_integer_scales_round_trip_and_rescale(scale_name, data):
    scale = BUILTIN_SCALES[scale_name]
    n = data.draw(st.integers(int(scale.low), int(scale.high)))
    form = data.draw(st.sampled_from(ANSWER_FORMS))
    verdict = parse_score(form.format(n=n, high=int(scale.high)), scale)
    assert verdict.status == "ok" and verdict.raw_score == n
    assert verdict.score == pytest.approx(100 * (n - scale.low) / (scale.high - scale.low))


@settings(deadline=None)
@given(reasoning=REASONING, n=st.integers(0, 100))
def test_reasoning_before_a_final_score_line(reasoning, n):
    verdict = parse_score(f"{reasoning}\n\nScore: {n}", SCALE_0_100)
    assert (verdict.status, verdict.raw_score) == ("ok", float(n))


@settings(deadline=None)
@given(n=st.integers(101, 10**6), form=st.sampled_from(["{n}", "Score: {n}", '{{"score": {n}}}']))
def test_out_of_range_is_unparseable_never_clipped(n, form):
    verdict = parse_score(form.format(n=n), SCALE_0_100)
    assert verdict.status == "unparseable" and verdict.score is None and "outside" in verdict.detail


@settings(deadline=None)
@given(first=st.integers(0, 100), second=st.integers(0, 100))
def test_two_different_answers_are_unparseable(first, second):
    verdict = parse_score(f"Score: {first}\n\nScore: {second}", SCALE_0_100)
    if first == second:
        assert verdict.raw_score == first
    else:
        assert verdict.status == "unparseable" and "conflicting" in verdict.detail


@settings(deadline=None)
@given(text=REASONING)
def test_text_without_digits_never_yields_a_score(text):
    verdict = parse_score(text, SCALE_0_100)
    assert verdict.status in ("unparseable", "refused") and verdict.score is None


@settings(deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("0123456789 .:/-%{}\"score\n*`")) | st.characters(), max_size=80))
def test_any_score_found_is_a_number_written_in_the_text(text):
    verdict = parse_score(text, SCALE_0_100)
    if verdict.status == "ok":
        written = {float(number) for number in re.findall(r"[-+]?\d+(?:\.\d+)?", text.replace("−", "-"))}
        assert verdict.raw_score in written
        assert 0 <= verdict.score <= 100
    else:
        assert verdict.score is None and verdict.raw_score is None and verdict.detail


def test_emphasis_between_digits_does_not_join_them() -> None:
    # found by hypothesis: stripping "*" turned "1*0" into the score 10
    verdict = parse_score("1*0", SCALE_0_100)
    assert verdict.raw_score != 10.0
    assert parse_score("**73**", SCALE_0_100).raw_score == 73.0


_SIMPLE_FORMS = st.sampled_from(["{n}", " {n}\n", "Score: {n}", "score:{n}", "SCORE :  {n} ", "{sign}{n}", "Score: {sign}{n}"])


@settings(max_examples=400)
@given(
    number=st.one_of(st.integers(-200, 200).map(str), st.decimals(-150, 150, places=2, allow_nan=False, allow_infinity=False).map(str)),
    sign=st.sampled_from(["", "+", "-"]),
    form=_SIMPLE_FORMS,
    scale_name=st.sampled_from(sorted(BUILTIN_SCALES)),
)
def test_the_fast_path_gives_the_lenient_readers_verdict(number, sign, form, scale_name):
    # parse_score reads "73" / "Score: 73" directly; the full lenient reader must agree
    from engine.prompts.parse import _parse_lenient

    text = form.format(n=number.lstrip("+-") if "{sign}" in form else number, sign=sign)
    scale = BUILTIN_SCALES[scale_name]
    assert parse_score(text, scale) == _parse_lenient(text, scale)


_JSON_KEYS = st.sampled_from(["score", "Score", "similarity", "rating", "final_score", "semantic-similarity", "answer", "reasoning", "note", "scores"])
_JSON_VALUES = st.one_of(
    st.integers(-200, 200),
    st.floats(-150, 150, allow_nan=False),
    st.booleans(),
    st.none(),
    st.text(alphabet="0123456789 .-abc{}<\\", max_size=6),
    st.dictionaries(st.just("score"), st.integers(0, 100), max_size=1),
)


@settings(max_examples=600)
@given(
    fields=st.lists(st.tuples(_JSON_KEYS, _JSON_VALUES), min_size=0, max_size=3),
    separators=st.sampled_from([(", ", ": "), (",", ":"), (",\n  ", ": ")]),
    padding=st.sampled_from(["", " ", "\n", "  \n"]),
    scale_name=st.sampled_from(sorted(BUILTIN_SCALES)),
)
def test_the_json_fast_path_gives_the_lenient_readers_verdict(fields, separators, padding, scale_name):
    # parse_score reads a one-line {"score": 73} directly; the full lenient reader must agree
    from engine.prompts.parse import _parse_lenient

    text = padding + json.dumps(dict(fields), separators=separators) + padding
    scale = BUILTIN_SCALES[scale_name]
    assert parse_score(text, scale) == _parse_lenient(text, scale)


def test_the_json_fast_path_reads_well_formed_answers():
    from engine.prompts.parse import _plain_json_answer

    assert _plain_json_answer('{"score": 73}', SCALE_0_100).raw_score == 73.0
    assert _plain_json_answer(' {"similarity": 12.5, "score": 12.5} ', SCALE_0_100).raw_score == 12.5
    assert _plain_json_answer('{"score": 173}', SCALE_0_100).status == "unparseable"
    # anything else is left to the lenient reader
    for text in ('{"score": 73, "reasoning": "x"}', '{"score": 7, "rating": 8}', '{"score": "73"}', '{\n"score": 73\n}', "Score: 73"):
        assert _plain_json_answer(text, SCALE_0_100) is None
