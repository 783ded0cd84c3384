"""What the simulated judge answers to a validated call: a score for a pair
of delimited documents, triples for a single document, and the score in
the form a guided-decoding regex admits."""

from __future__ import annotations

import re

import msgspec

from engine.prompts.documents import DocumentsNotFound, extract_comparison, extract_document, extract_documents, extract_pairs_comparison
from simulation import judge as sim
from simulation import pairwise
from simulation.items import ItemIndex
from simulation.wire import Call


def answer(params: sim.SimJudgeParams, call: Call, items: ItemIndex | None) -> tuple[str, str]:
    """The answer text and finish reason (`length` when max_tokens cuts it)."""
    if call.messages and "\n</original_2>\n\n<document_2>\n" in call.messages[-1].content:
        try:
            return pairs_comparison_answer(params, items, *extract_pairs_comparison(call.messages)), "stop"
        except DocumentsNotFound:
            pass
    if call.messages and "\n</original>\n\n<document_1>\n" in call.messages[-1].content:
        try:
            return comparison_answer(params, *extract_comparison(call.messages)), "stop"
        except DocumentsNotFound:
            pass
    try:
        first, second = extract_documents(call.messages)
    except DocumentsNotFound:
        try:
            text = sim.triples_answer(extract_document(call.messages))
        except DocumentsNotFound:
            return "I can only compare two documents given in <document_1> and <document_2> blocks.", "stop"
    else:
        if call.wants_json:
            text = msgspec.json.encode({"document_1": sim.triples(first), "document_2": sim.triples(second)}).decode()
        else:
            item = items.item(first, second) if items is not None else None
            if item is None:
                item = sim.infer_item(first, second)
            salt = "" if call.seed is None else str(call.seed)
            text, value = sim.judge_answer(params, item, first, second, salt)
            if call.guided_regex:
                text = fit_regex(call.guided_regex, text, value)
    limit = call.max_tokens * 4  # ~4 characters a token
    if len(text) > limit:
        return text[:limit], "length"
    return text, "stop"


def comparison_answer(params: sim.SimJudgeParams, original: str, first: str, second: str) -> str:
    """A pairwise comparison ("which edit is closer to the original?"): the
    contestants are the needle types recovered from each edit, compared by
    planted Bradley-Terry strengths (simulation.pairwise) of needle_means /
    PAIRWISE_SCALE, so the closer a needle type scores to identical text the
    stronger it is."""
    x, y = sim.infer_item(original, first).needle, sim.infer_item(original, second).needle
    strengths = {needle: mean / PAIRWISE_SCALE for needle, mean in params.needle_means.items()}
    planted = pairwise.SimPairwiseParams(seed=params.seed, strengths=strengths, tie_width=0.3, position_bias=params.order_bias / PAIRWISE_SCALE)
    return {"1": "A", "2": "B", "tie": "tie"}[pairwise.answer(planted, x, y, sim.identity_of(first, second, original))]


def pairs_comparison_answer(params: sim.SimJudgeParams, items: ItemIndex | None, original_1: str, first: str, original_2: str, second: str) -> str:
    """A comparison of two (original, edit) pairs (tournaments of positions or
    documents): each pair's Bradley-Terry log-strength is the judge's
    noise-free mean score of that item (`sim.mean_score`: needle, position,
    hay and document effects) / PAIRWISE_SCALE, so the pair it would score
    closer is the stronger. The item is recovered exactly when the server
    holds the corpus, else guessed from the texts (no document effect)."""

    def strength(original: str, edited: str) -> float:
        item = (items.item(original, edited) if items is not None else None) or sim.infer_item(original, edited)
        return sim.mean_score(params, msgspec.structs.replace(item, order="12")) / PAIRWISE_SCALE

    strengths = {"1": strength(original_1, first), "2": strength(original_2, second)}
    planted = pairwise.SimPairwiseParams(seed=params.seed, strengths=strengths, tie_width=0.3, position_bias=params.order_bias / PAIRWISE_SCALE)
    return {"1": "A", "2": "B", "tie": "tie"}[pairwise.answer(planted, "1", "2", sim.identity_of(first, second, original_1 + "\x1f" + original_2))]


# points of needle mean per unit of log-strength: none (97) against neg (62) wins ~97% of decisive answers
PAIRWISE_SCALE = 10.0


def fit_regex(pattern: str, text: str, value: int) -> str:
    """The answer in the first form the guided-decoding regex accepts: the
    score line, the bare 0-100 number, or the score mapped linearly onto the
    scale the regex admits (probed: -3..3, 1-7, 0-5, 0-1); unchanged when
    nothing fits."""
    try:
        compiled = re.compile(pattern)
    except re.error:
        return text
    fits = lambda candidate: compiled.fullmatch(candidate) is not None  # noqa: E731
    for candidate in (text, str(value)):
        if fits(candidate):
            return candidate
    for low, high, probe_in, probe_out in ((-3, 3, "-3", "4"), (1, 7, "7", "0"), (0, 5, "5", "6"), (0, 1, "1", "2")):
        if fits(probe_in) and not fits(probe_out):
            raw = low + value * (high - low) / 100
            for candidate in (f"{raw:.2f}", f"{raw:.1f}", str(round(raw))):
                if fits(candidate):
                    return candidate
    return text
