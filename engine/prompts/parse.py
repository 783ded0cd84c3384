"""Turning a judge's raw text into a score, or an honest reason why not.

Pure functions. The lenient parser accepts the forms real models produce:

- JSON with a score field (`{"score": 73}`, also inside markdown fences or
  after other text; any key named like `score`, `similarity`, `rating`),
- answer lines: "Score: 73", "**Final score:** 73/100", "Similarity: 73%",
  a bare "73" or "73." line, "73 - nearly identical" on a line of its own,
  with reasoning before or explanation after them,
- when there is neither, a score named in running text ("a score of 73",
  "I would rate them 73", "73 out of 100", "the final answer is 73").

Answer wrappers (`<score>73</score>`, `<answer>…</answer>`, `$\\boxed{73}$`)
are unwrapped first.

Outcomes (a `Verdict`):
- `ok` with the raw score, its 0–100 rescaling and the scale name, when
  exactly one value was given and it lies on the scale;
- `unparseable` (raw text stays in the results row) when the value is off
  the scale, given out of another maximum ("7/10" on 0–100), when several
  different values were given ("Score: 70-80", "Score: 70 ... Score: 80",
  JSON and answer line disagreeing), or when none was found;
- `refused` when no value was found and the text reads as a refusal.

Numbers in reasoning that are not answers (list items, counts, years, an
echoed rubric band "75–100: ...") are ignored whenever an answer line or
JSON field exists. `<think>…</think>` blocks of reasoning models are
dropped before parsing. Never a default score.

The strict `number` mode (the `pair` prompt for non-LLM judges) accepts only
a plain decimal number.
"""

from __future__ import annotations

import re
from typing import Literal

import msgspec

from engine.contracts import Verdict
from engine.prompts.scales import Scale

ParserMode = Literal["lenient", "number"]
PARSER_VERSION = "score-parser-v2"  # part of every prompt version: bump on behaviour changes

_NUM = r"[-+]?\d+(?:\.\d+)?"
_PLAIN_NUMBER = re.compile(rf"\s*({_NUM})\s*")
# The answers a guided or well-behaved judge gives ("73", "Score: 73"): read
# directly. Anything else goes through the lenient reader, which gives these
# the same verdict (tests/test_parse.py checks that it does).
_SIMPLE_ANSWER = re.compile(rf"\s*(?:score\s*:\s*)?({_NUM})\s*", re.IGNORECASE)
THINK_BLOCK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)
_FENCE_LINE = re.compile(r"^\s*(```|~~~)")
FENCED_BLOCK = re.compile(r"```[\w-]*\s*\n?(.*?)```", re.DOTALL)
_FLAT_OBJECT = re.compile(r"\{[^{}]*\}")
_LABEL = (
    r"(?:(?:final|overall|my|the)\s+)?(?:semantic\s+)?(?:similarity\s+)?"
    r"(?:score|rating|similarity|answer|grade|result)"
)
_ANSWER_LINE = re.compile(
    rf"^(?:(?P<label>{_LABEL})\s*(?:\([^()]*\))?\s*(?:is\s*[:=]?|[:=：]|\s[-–—]\s)?\s*)?(?P<num>{_NUM})(?P<tail>.*)$",
    re.IGNORECASE,
)
_DENOMINATOR = re.compile(rf"^\s*(?:/|out\s+of\b)\s*(?P<den>{_NUM})", re.IGNORECASE)
_PERCENT = re.compile(r"^\s*(?:%|percent\b)", re.IGNORECASE)
_RANGE = re.compile(rf"^\s*(?:-|–|—|to\b|or\b|and\b|,)\s*{_NUM}", re.IGNORECASE)
_UNLABELLED_TAIL = re.compile(r"^(?:\s*\.?\s*|\s*[-–—:]\s+\D.*|\s*\(\D.*)$")
_LABELLED_TAIL = re.compile(r"^(?:$|[\s.,;:!)\]*_\-–—(].*)$")
_MARKDOWN = re.compile(r"[*_`\"]+")
# Emphasis between two digits separates them ("1*0" is not 10).
_MARKDOWN_BETWEEN_DIGITS = re.compile(r"(?<=\d)[*_`\"]+(?=\d)")


def _strip_markdown(text: str) -> str:
    return _MARKDOWN.sub("", _MARKDOWN_BETWEEN_DIGITS.sub(" ", text))
# Answer wrappers some models add: <score>85</score>, <answer>…</answer>, $\boxed{85}$.
_ANSWER_TAG = re.compile(r"</?\s*(?:score|answer|rating|similarity|final_answer)\s*>", re.IGNORECASE)
_BOXED = re.compile(r"\$*\\boxed\{\s*([^{}]*?)\s*\}\$*")
_LINE_PREFIX = re.compile(r"^\s*(?:#+\s*|>\s*)*(?:[-*•+]\s+(?=[^\W\d]))?")
_MENTION = re.compile(
    rf"(?:\b(?:score|rating|similarity|answer)\b[\"']?\s*(?:of|is|would\s+be|should\s+be|=|:)\s*"
    rf"(?:about|around|approximately|roughly|a)?\s*(?P<a>{_NUM})"
    rf"|\b(?:rate|score|give)\s+(?:it|this|them|the\s+(?:documents|pair|similarity))\s+(?:as\s+|at\s+|a\s+)?(?P<b>{_NUM})"
    rf"|(?P<c>{_NUM})\s*(?:/|out\s+of\b)\s*(?P<den>{_NUM}))",
    re.IGNORECASE,
)
_REFUSAL = re.compile(
    r"\b(?:I(?:'m| am) sorry\b"
    r"|I (?:can(?:no|')t|won't|will not|(?:am|'m) (?:unable|not able) to) (?:help|assist|comply|provide|fulfil"
    r"|do (?:that|this)|rate|score|evaluate|assess|compare|process|engage|complete|judge)"
    r"|I must decline|unable to (?:help|assist|comply)|against (?:my|the) (?:guidelines|polic(?:y|ies))"
    r"|as an AI\b)",
    re.IGNORECASE,
)
_SCORE_KEYS = {"score", "similarity", "rating", "answer", "semantic_similarity", "grade"}


class _Findings:
    """What one response asserts: candidate values and reasons to distrust them."""

    def __init__(self) -> None:
        self.values: list[float] = []
        self.problems: list[str] = []

    def distinct(self) -> list[float]:
        seen: list[float] = []
        for value in self.values:
            if value not in seen:
                seen.append(value)
        return seen


def parse_score(text: str, scale: Scale, *, mode: ParserMode = "lenient") -> Verdict:
    if mode == "number":
        match = _PLAIN_NUMBER.fullmatch(text)
        if match is None:
            return _unparseable(f"expected a plain number on {scale.name}, got {_preview(text)}", scale)
        return _checked(float(match.group(1)), scale)

    simple = _SIMPLE_ANSWER.fullmatch(text)
    if simple is not None:
        return _checked(float(simple.group(1)), scale)
    verdict = _plain_json_answer(text, scale)
    if verdict is not None:
        return verdict
    return _parse_lenient(text, scale)


def _plain_json_answer(text: str, scale: Scale) -> Verdict | None:
    """`{"score": 73}` on one line, read directly; None for anything else.

    Only where the lenient reader provably gives the same verdict: one ASCII
    line (no think block, answer tag, boxed answer or unicode minus to
    rewrite, no second line that could be an answer line), a flat object
    (no inner object for the flat-object search to find) whose every key is
    a score key and every value a number (no mention search is reached), all
    values equal. tests/test_parse.py compares the two on generated answers.
    """
    body = text.strip()
    if not (body[:1] == "{" and body[-1:] == "}") or "\n" in body or "\r" in body or "<" in body or "\\" in body or not body.isascii():
        return None
    try:
        decoded = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return None
    if not isinstance(decoded, dict) or not decoded:
        return None
    value: float | None = None
    for key, number in decoded.items():
        if type(number) not in (int, float) or not _is_score_key(key):
            return None
        if value is not None and float(number) != value:
            return None  # conflicting scores: the lenient reader words that
        value = float(number)
    assert value is not None
    return _checked(value, scale)


def _parse_lenient(text: str, scale: Scale) -> Verdict:
    body = THINK_BLOCK.sub("", text).replace("−", "-")
    body = _BOXED.sub(r"\1", _ANSWER_TAG.sub("", body)).strip()
    if not body:
        return _unparseable("empty response" if not text.strip() else "only reasoning, no answer after </think>", scale)

    findings = _Findings()
    _json_values(body, scale, findings)
    _answer_lines(body, scale, findings)
    if not findings.values and not findings.problems:
        _mentions(body, scale, findings)
    if findings.problems:
        return _unparseable("; ".join(dict.fromkeys(findings.problems)), scale)
    values = findings.distinct()
    if len(values) > 1:
        return _unparseable("conflicting scores: " + ", ".join(_number(v) for v in values), scale)
    if not values:
        if _REFUSAL.search(body):
            return Verdict(status="refused", scale=scale.name, detail="the judge declined to score")
        return _unparseable("no score found", scale)
    return _checked(values[0], scale)


def _checked(raw: float, scale: Scale) -> Verdict:
    if not scale.contains(raw):
        return _unparseable(f"score {_number(raw)} outside the scale {scale.name}", scale)
    return Verdict(status="ok", score=scale.rescale(raw), raw_score=raw, scale=scale.name)


def _unparseable(detail: str, scale: Scale) -> Verdict:
    return Verdict(status="unparseable", scale=scale.name, detail=detail)


def _json_values(body: str, scale: Scale, findings: _Findings) -> None:
    candidates = [block.strip() for block in FENCED_BLOCK.findall(body)]
    candidates += _FLAT_OBJECT.findall(body)
    if body.startswith("{"):
        candidates.append(body)
    for candidate in dict.fromkeys(candidates):
        if not candidate.startswith("{"):
            continue
        try:
            decoded = msgspec.json.decode(candidate)
        except msgspec.DecodeError:
            continue
        if not isinstance(decoded, dict):
            continue
        for key, value in decoded.items():
            if not _is_score_key(str(key)):
                continue
            number = _json_number(value)
            if number is None:
                findings.problems.append(f"JSON field {key!r} is not a number: {_preview(repr(value))}")
            else:
                findings.values.append(number)


def _is_score_key(key: str) -> bool:
    key = key.lower().replace("-", "_").replace(" ", "_")
    return key in _SCORE_KEYS or key.endswith(("_score", "_rating"))


def _json_number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        match = _PLAIN_NUMBER.fullmatch(value)
        if match is not None:
            return float(match.group(1))
    return None


def _answer_lines(body: str, scale: Scale, findings: _Findings) -> None:
    lines = [line for line in body.splitlines() if line.strip() and not _FENCE_LINE.match(line)]
    for index, line in enumerate(lines):
        cleaned = _strip_markdown(_LINE_PREFIX.sub("", line)).strip()
        match = _ANSWER_LINE.match(cleaned)
        if match is None:
            continue
        labelled = match.group("label") is not None
        is_final_line = index == len(lines) - 1
        tail = match.group("tail")
        if _RANGE.match(tail):
            # "Score: 70-80" or a final "70 or 80" is an answer with two values;
            # an unlabelled range elsewhere is an echoed rubric band.
            if labelled or is_final_line:
                findings.problems.append(f"several scores on one answer line: {_preview(cleaned)}")
            continue
        if _DENOMINATOR.match(tail):
            denominator = float(_DENOMINATOR.match(tail).group("den"))
            if denominator != scale.high:
                findings.problems.append(
                    f"score given out of {_number(denominator)}, expected out of {_number(scale.high)}"
                )
                continue
            tail = tail[_DENOMINATOR.match(tail).end() :]
        elif _PERCENT.match(tail):
            if (scale.low, scale.high) != (0, 100):
                findings.problems.append(f"score given as a percentage on the scale {scale.name}")
                continue
            tail = tail[_PERCENT.match(tail).end() :]
        if not (_LABELLED_TAIL if labelled else _UNLABELLED_TAIL).match(tail):
            continue
        findings.values.append(float(match.group("num")))


def _mentions(body: str, scale: Scale, findings: _Findings) -> None:
    for match in _MENTION.finditer(_strip_markdown(body)):
        if match.group("c") is not None:
            if float(match.group("den")) != scale.high:
                continue  # "3/4 of the sentences": a fraction, not a score
            findings.values.append(float(match.group("c")))
        else:
            findings.values.append(float(match.group("a") or match.group("b")))


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def _preview(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")
