"""Offline baseline judges: non-LLM similarity measures behind the adapter protocol.

They read the two documents back from a rendered call (the delimiter
contract of engine.prompts.documents; use them with the `pair` prompt) and
answer with the score as plain number text on 0–100, so they go through the
same cache, parser and results as any LLM judge. `spec.model` selects the
measure:

- `jaccard`: token-set Jaccard, 100·|A∩B|/|A∪B| over lowercased word
  tokens (`\\w+`).
- `seqratio`: character-level sequence ratio 100·2·LCS/(|a|+|b|) (the
  normalised Indel similarity, computed by rapidfuzz in C++: exact, no
  autojunk heuristic, microseconds where difflib's SequenceMatcher takes
  ~0.1 s on 3,000-character documents).
- `tfidf`: cosine of TF-IDF vectors of the two documents. The IDF is
  defined over the pair itself (N = 2 documents, smoothed:
  idf(t) = ln((1+N)/(1+df(t))) + 1), so a word in both documents weighs 1
  and a word in one of them 1 + ln(3/2); TF is the raw count.

Texts without any word token: two such texts score 100 under jaccard and
tfidf (nothing tells them apart at word level), one such text against a
text with words scores 0. Scores are deterministic; `replicate` does not
change them.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from collections.abc import Callable

import numpy as np
from rapidfuzz.distance import Indel

from engine.contracts import AdapterConfigError, Backend, CallRequest, CallResult, Capabilities, JudgeSpec, Usage
from engine.prompts import DocumentsNotFound, extract_documents

_TOKEN = re.compile(r"\w+")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def jaccard_similarity(first: str, second: str) -> float:
    a, b = set(tokens(first)), set(tokens(second))
    union = len(a | b)
    if union == 0:
        return 100.0
    return 100.0 * len(a & b) / union


def sequence_ratio(first: str, second: str) -> float:
    return 100.0 * Indel.normalized_similarity(first, second)


def tfidf_cosine(first: str, second: str) -> float:
    counts = (Counter(tokens(first)), Counter(tokens(second)))
    if not counts[0] and not counts[1]:
        return 100.0
    if not counts[0] or not counts[1]:
        return 0.0
    vocabulary = list(counts[0].keys() | counts[1].keys())
    tf = np.array([[count.get(term, 0) for term in vocabulary] for count in counts], dtype=np.float64)
    document_frequency = (tf > 0).sum(axis=0)
    idf = np.log((1 + 2) / (1 + document_frequency)) + 1.0
    vectors = tf * idf
    cosine = float(vectors[0] @ vectors[1]) / math.sqrt(float(vectors[0] @ vectors[0]) * float(vectors[1] @ vectors[1]))
    return 100.0 * cosine


MEASURES: dict[str, Callable[[str, str], float]] = {
    "jaccard": jaccard_similarity,
    "seqratio": sequence_ratio,
    "tfidf": tfidf_cosine,
}
MEASURE_VERSION = "v1"
CAPABILITIES = Capabilities()  # a measure of the texts: no decoding at all


def score_text(score: float) -> str:
    """Plain number text on 0–100 with at most six decimals ("100", "87.5")."""
    clamped = min(100.0, max(0.0, score))  # float noise around the bounds
    return f"{clamped:.6f}".rstrip("0").rstrip(".")


class BaselineAdapter:
    capabilities = CAPABILITIES

    def __init__(self, spec: JudgeSpec, measure: Callable[[str, str], float]) -> None:
        self.spec = spec
        self._measure = measure
        self._model_version = f"baseline-{spec.model}-{MEASURE_VERSION}"

    async def complete(self, request: CallRequest) -> CallResult:
        started_wall, started = time.time(), time.perf_counter()
        try:
            first, second = extract_documents(request.messages)
        except DocumentsNotFound as error:
            return CallResult(
                status="error",
                text=(
                    f"baseline judge {self.spec.name!r}: the call holds no delimited document pair ({error}); "
                    "use the 'pair' prompt"
                ),
                error_kind="bad_request",
                model_version=self._model_version,
                started_at=started_wall,
                finished_at=time.time(),
            )
        text = score_text(self._measure(first, second))
        latency = time.perf_counter() - started
        return CallResult(
            status="ok",
            text=text,
            usage=Usage(),
            latency_s=latency,
            model_version=self._model_version,
            finish_reason="stop",
            started_at=started_wall,
            finished_at=started_wall + latency,
        )

    async def aclose(self) -> None:
        return None


def create(spec: JudgeSpec) -> BaselineAdapter:
    measure = MEASURES.get(spec.model)
    if measure is None:
        raise AdapterConfigError(
            f"judge {spec.name!r}: adapter 'baseline' has no model {spec.model!r}; expected one of {', '.join(MEASURES)}"
        )
    if spec.options:
        raise AdapterConfigError(
            f"judge {spec.name!r}: adapter 'baseline' takes no options, got {', '.join(sorted(spec.options))}"
        )
    return BaselineAdapter(spec, measure)


BASELINE = Backend(capabilities=lambda spec: CAPABILITIES, create=create, free_answers=True, billed=False)
