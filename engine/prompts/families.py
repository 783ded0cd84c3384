"""The two kinds of prompt, built from a validated PromptDefinition.

`ScorePrompt`: one judge call per pair, the judge answers a number.
`TriplesPrompt`: one extraction call per document, the score is our Jaccard.

Both precompute everything that does not depend on the documents, so that
render() costs one string concatenation plus the delimiter escaping.
"""

from __future__ import annotations

from engine.contracts import CallResult, Message, RenderedCall, Verdict
from engine.prompts.definition import PromptDefinition
from engine.prompts.documents import ORIGINAL_TAG, PAIR_TAGS, PAIRS_ORIGINAL_TAGS, SINGLE_TAG, document_block, pair_blocks
from engine.prompts.parse import parse_score
from engine.prompts.triples import UnparseableTriples, canonical_triples, jaccard, parse_triples

_DETAIL_LIMIT = 300


class _PromptBase:
    def __init__(self, definition: PromptDefinition) -> None:
        self.definition = definition
        self.id = definition.id
        self.version = definition.version
        self.scale = definition.scale.name
        self.rating_scale = definition.scale
        self.decoding = definition.decoding
        self._system = (Message("system", definition.system),) if definition.system else ()
        instructions = definition.instructions.strip("\n")
        self._prefix = instructions + "\n\n" if instructions.strip() else ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r}, version={self.version!r}, scale={self.scale!r})"

    def _failure(self, result: CallResult, label: str = "") -> Verdict | None:
        if result.status in ("refused", "error"):
            kind = f"{result.error_kind}: " if result.error_kind else ""
            return Verdict(status=result.status, scale=self.scale, detail=f"{label}{kind}{_clip(result.text)}")
        return None


class ScorePrompt(_PromptBase):
    """The judge sees instructions, then both documents, and answers a number."""

    namespace = "judge"

    def render(self, document_1: str, document_2: str) -> tuple[RenderedCall, ...]:
        content = self._prefix + pair_blocks(document_1, document_2)
        messages = (*self._system, Message("user", content))
        return (RenderedCall(namespace=self.namespace, messages=messages, decoding=self.decoding),)

    def verdict(self, results: tuple[CallResult, ...]) -> Verdict:
        if len(results) != 1:
            raise ValueError(f"prompt {self.id}: expected 1 call result, got {len(results)}")
        result = results[0]
        failure = self._failure(result)
        if failure is not None:
            return failure
        verdict = parse_score(result.text, self.rating_scale, mode=self.definition.parser.mode)
        if verdict.status == "unparseable" and result.finish_reason == "length":
            detail = f"{verdict.detail} (cut off at max_tokens={self.decoding.max_tokens})"
            return Verdict(status="unparseable", scale=self.scale, detail=detail)
        return verdict


class TriplesPrompt(_PromptBase):
    """Each document is sent alone for triple extraction; we score the overlap."""

    namespace = "triples"

    def render(self, document_1: str, document_2: str) -> tuple[RenderedCall, ...]:
        share = self.definition.triples.share_identical_extractions and document_1 == document_2
        return (
            self._extraction(document_1, 0),
            self._extraction(document_2, 0 if share else 1),
        )

    def _extraction(self, document: str, replicate_offset: int) -> RenderedCall:
        content = self._prefix + document_block(SINGLE_TAG, document)
        return RenderedCall(
            namespace=self.namespace,
            messages=(*self._system, Message("user", content)),
            decoding=self.decoding,
            replicate_offset=replicate_offset,
        )

    def verdict(self, results: tuple[CallResult, ...]) -> Verdict:
        if len(results) != 2:
            raise ValueError(f"prompt {self.id}: expected 2 call results (one per document), got {len(results)}")
        for number, result in enumerate(results, start=1):
            failure = self._failure(result, f"document {number} extraction: ")
            if failure is not None:
                return failure
        sets = []
        for number, result in enumerate(results, start=1):
            try:
                triples = parse_triples(result.text)
            except UnparseableTriples as error:
                cut = f" (cut off at max_tokens={self.decoding.max_tokens})" if result.finish_reason == "length" else ""
                return Verdict(status="unparseable", scale=self.scale, detail=f"document {number} extraction: {error}{cut}")
            sets.append(canonical_triples(triples))
        score = jaccard(sets[0], sets[1])
        if score is None:
            return Verdict(status="unparseable", scale=self.scale, detail="no triples in either document: Jaccard undefined")
        return Verdict(status="ok", score=score, raw_score=score, scale=self.scale)


class PairwisePrompt(_PromptBase):
    """The judge sees the original and two edits of it (A shown first) and
    answers which edit is closer in meaning to the original, or "tie"; or,
    given `original_2`, two (original, edit) pairs, and answers in which pair
    the edit is closer to its own original. The verdict is the first-shown
    edit's score: 100 (A), 0 (B) or 50 (tie)."""

    namespace = "judge"
    SCORES = {"a": 100.0, "b": 0.0, "tie": 50.0}

    def render(self, document_1: str, document_2: str, original: str = "", original_2: str | None = None) -> tuple[RenderedCall, ...]:
        if original_2 is None:
            content = self._prefix + document_block(ORIGINAL_TAG, original) + "\n\n" + pair_blocks(document_1, document_2)
        else:
            blocks = zip((PAIRS_ORIGINAL_TAGS[0], PAIR_TAGS[0], PAIRS_ORIGINAL_TAGS[1], PAIR_TAGS[1]), (original, document_1, original_2, document_2))
            content = self._prefix + "\n\n".join(document_block(tag, text) for tag, text in blocks)
        return (RenderedCall(namespace=self.namespace, messages=(*self._system, Message("user", content)), decoding=self.decoding),)

    def verdict(self, results: tuple[CallResult, ...]) -> Verdict:
        (result,) = results
        failure = self._failure(result)
        if failure is not None:
            return failure
        answer = result.text.strip().strip(".").strip().lower()
        score = self.SCORES.get(answer)
        if score is None:
            return Verdict(status="unparseable", scale=self.scale, detail=f"expected A, B or tie: {_clip(result.text)!r}")
        return Verdict(status="ok", score=score, raw_score=score, scale=self.scale)


def _clip(text: str) -> str:
    return text if len(text) <= _DETAIL_LIMIT else text[: _DETAIL_LIMIT - 1] + "…"


def build_prompt(definition: PromptDefinition) -> ScorePrompt | TriplesPrompt | PairwisePrompt:
    if definition.kind == "pairwise":
        return PairwisePrompt(definition)
    return TriplesPrompt(definition) if definition.kind == "triples" else ScorePrompt(definition)
