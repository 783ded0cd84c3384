"""A simulated judge with planted effects, so the analysis can be checked
against known truth. Pure functions: no I/O, no clock, no global state.

The score of one item is

    mu    = needle_means[needle]
          + length_slope · (k − 1)                 (k = i + j + 1; perturbing needles only)
          − early_penalty · [i < j]                (needle in the first half; only
                                                    for needles in early_penalty_needles)
          + rand_hay_leniency · [hay == "rand"]    (perturbing needles only)
          + order_bias · [order == "21"]
          + doc_effect(doc_id)                     (N(0, doc_sd), one draw per document)
    score = clip(round(mu + N(0, sd)), 0, 100)   (sd: noise_sd_by_needle[needle], else noise_sd)
            then, with probability band_snap_prob, the nearest edge of band_edges

Controls: `null_edit` ~ N(null_edit_mean, control_sd), `negative` ~
N(negative_mean, control_sd). "First half" is i < j (fewer sentences before
the needle than after), "second half" i > j; i == j is neither. The planted
early-positionality bias, mean(second half) − mean(first half), is therefore
+early_penalty for the penalised needles (before clipping and snapping, which
`expected_score` accounts for exactly). Every draw comes from
`engine.seeding.item_seed` keyed by the judge seed and the item's identity
(two 32-bit uniforms from one seed: a normal by inverse CDF and the snap
coin — microseconds, where a numpy generator per call costs ~40 µs and the
fake server answers thousands of calls a second).

A judge sees only the request, and so does this one: the item is recovered
from the two documents it is shown, exactly when the fake server holds the
prepared corpus (`simulation.items.ItemIndex`), else guessed from the texts
alone (`infer_item`). The noise is keyed by the two texts and the request's
seed.
"""

from __future__ import annotations

import functools
import hashlib
import re
import statistics

import msgspec
import numpy as np
from scipy.special import ndtr

from engine.seeding import item_rng, item_seed


class SimJudgeParams(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    seed: int = 0
    needle_means: dict[str, float] = msgspec.field(
        default_factory=lambda: {"none": 97.0, "neg": 62.0, "con": 74.0, "ner": 68.0}
    )
    noise_sd: float = 6.0
    noise_sd_by_needle: dict[str, float] = {}  # a noisier (or quieter) judge for some needle types' items
    doc_sd: float = 3.0
    early_penalty: float = 5.0
    early_penalty_needles: tuple[str, ...] = ("neg", "con", "ner")
    length_slope: float = 1.0
    rand_hay_leniency: float = 4.0
    order_bias: float = 0.0
    band_edges: tuple[float, ...] = (0.0, 25.0, 50.0, 75.0, 100.0)
    band_snap_prob: float = 0.2
    null_edit_mean: float = 99.0
    negative_mean: float = 8.0
    control_sd: float = 2.0


class ItemInfo(msgspec.Struct, frozen=True, kw_only=True):
    """What the simulated judge recovers of an item from the texts it is shown."""

    needle: str = "none"
    hay: str = "orig"
    i: int = 0
    j: int = 0
    control: str = ""
    order: str = "12"
    doc_id: str = ""


# ---------------------------------------------------------------------------
# The score


def mean_score(params: SimJudgeParams, item: ItemInfo) -> float:
    """The noise-free mean (before rounding, clipping and snapping)."""
    if item.control == "null_edit":
        return params.null_edit_mean
    if item.control == "negative":
        return params.negative_mean
    mu = params.needle_means.get(item.needle, params.needle_means.get("none", 97.0))
    if item.needle != "none":
        mu += params.length_slope * (item.i + item.j)
        if item.i < item.j and item.needle in params.early_penalty_needles:
            mu -= params.early_penalty
        if item.hay == "rand":
            mu += params.rand_hay_leniency
    if item.order == "21":
        mu += params.order_bias
    return mu + doc_effect(params, item.doc_id)


def doc_effect(params: SimJudgeParams, doc_id: str) -> float:
    if not doc_id or params.doc_sd == 0:
        return 0.0
    return _doc_draw(params.seed, doc_id) * params.doc_sd


@functools.lru_cache(maxsize=1 << 16)
def _doc_draw(seed: int, doc_id: str) -> float:
    """One standard-normal draw per document (cached: every item of a document reuses it)."""
    return float(item_rng(seed, "sim-doc", doc_id).normal())


def _sd(params: SimJudgeParams, item: ItemInfo) -> float:
    if item.control in ("null_edit", "negative"):
        return params.control_sd
    return params.noise_sd_by_needle.get(item.needle, params.noise_sd)


def snap(params: SimJudgeParams, score: int) -> int:
    """The band edge nearest to `score` (ties to the higher edge)."""
    if not params.band_edges:
        return score
    return int(round(min(params.band_edges, key=lambda edge: (abs(edge - score), -edge))))


def score(params: SimJudgeParams, item: ItemInfo, identity: str) -> int:
    """The judge's 0–100 score; `identity` keys the noise (texts + request seed)."""
    noise, u = _normal_and_uniform(item_seed(params.seed, "sim-noise", identity))
    value = int(min(max(round(mean_score(params, item) + _sd(params, item) * noise), 0), 100))
    if item.control == "" and u < params.band_snap_prob:
        value = snap(params, value)
    return value


_STANDARD_NORMAL = statistics.NormalDist()


def _normal_and_uniform(seed: int) -> tuple[float, float]:
    """A standard-normal and a uniform [0, 1) draw from the two halves of a 64-bit seed."""
    low, high = seed & 0xFFFFFFFF, seed >> 32
    return _STANDARD_NORMAL.inv_cdf((low + 0.5) / 2**32), high / 2**32


def score_distribution(params: SimJudgeParams, item: ItemInfo) -> np.ndarray:
    """P(score = n) for n = 0..100, exactly (rounding, clipping, snapping included)."""
    mu, sd = mean_score(params, item), _sd(params, item)
    edges = np.arange(-0.5, 101.5, 1.0)
    cdf = ndtr((edges - mu) / sd) if sd > 0 else (edges >= mu).astype(float)
    p = np.diff(cdf)
    p[0] += cdf[0]
    p[-1] += 1.0 - cdf[-1]
    if item.control == "" and params.band_snap_prob > 0:
        snapped = np.zeros_like(p)
        for n, mass in enumerate(p):
            snapped[snap(params, n)] += mass
        p = (1 - params.band_snap_prob) * p + params.band_snap_prob * snapped
    return p


def expected_score(params: SimJudgeParams, item: ItemInfo) -> float:
    """The exact expectation of `score` for this item over the seeded noise."""
    return float(np.dot(np.arange(101), score_distribution(params, item)))


def planted_truth(params: SimJudgeParams) -> dict:
    """The planted parameters and what the analysis should recover from them."""
    return {
        "params": msgspec.to_builtins(params),
        "early_positionality_bias": {
            needle: (params.early_penalty if needle in params.early_penalty_needles else 0.0)
            for needle in params.needle_means
            if needle != "none"
        },
        "definition": (
            "bias = mean(second half, i > j) - mean(first half, i < j) in points, before clipping/snapping; "
            "expected_score(params, item) gives exact per-item expectations"
        ),
    }


# ---------------------------------------------------------------------------
# Items from the texts alone

_SENTENCE_END = re.compile(r"[.!?]\s+")
_WORD = re.compile(r"[\w'’-]+")
_NEGATIONS = frozenset({"not", "n't", "never", "no"})


def sentences(text: str) -> list[str]:
    """`text` split at whitespace after . ! or ? (the punctuation stays with its sentence).

    The same as splitting at the look-behind pattern `(?<=[.!?])\s+`, at half
    the cost: the fake server splits both documents of every request."""
    text = text.strip()
    out, start = [], 0
    for end in _SENTENCE_END.finditer(text):
        out.append(text[start : end.start() + 1])
        start = end.end()
    out.append(text[start:])
    return [s for s in out if s]


def infer_item(document_1: str, document_2: str) -> ItemInfo:
    """Guess the item from the texts alone: identical → none; equal up to
    whitespace → null_edit; one differing sentence → its needle type and
    position; otherwise unrelated → negative."""
    if document_1 == document_2:
        n = len(sentences(document_1))
        return ItemInfo(needle="none", i=(n - 1) // 2, j=n - 1 - (n - 1) // 2)
    if " ".join(document_1.split()) == " ".join(document_2.split()):
        return ItemInfo(control="null_edit")
    first, second = sentences(document_1), sentences(document_2)
    if len(first) == len(second):
        differing = [m for m, (a, b) in enumerate(zip(first, second)) if a != b]
        if len(differing) == 1:
            m = differing[0]
            return ItemInfo(needle=infer_needle_kind(first[m], second[m]), i=m, j=len(first) - 1 - m)
    return ItemInfo(control="negative")


def infer_needle_kind(a: str, b: str) -> str:
    """The needle type of an edit from sentence `a` to `b`: neg, con or ner."""
    words_a, words_b = _WORD.findall(a.lower()), _WORD.findall(b.lower())
    if (set(words_a) ^ set(words_b)) & _NEGATIONS or any(w.endswith("n't") for w in set(words_a) ^ set(words_b)):
        return "neg"
    if len(words_a) == len(words_b):
        changed = {(x, y) for x, y in zip(words_a, words_b) if x != y}
        if changed and changed <= {("and", "or"), ("or", "and")}:
            return "con"
    return "ner"


def identity_of(document_1: str, document_2: str, salt: str) -> str:
    h = hashlib.blake2b(digest_size=16)
    for part in (document_1, document_2, salt):
        h.update(part.encode("utf-8"))
        h.update(b"\x1f")
    return h.hexdigest()


def judge_answer(params: SimJudgeParams, item: ItemInfo, document_1: str, document_2: str, salt: str = "") -> tuple[str, int]:
    """The answer text ("Score: NN") and the score for a pair recovered as `item`."""
    value = score(params, item, identity_of(document_1, document_2, salt))
    return f"Score: {value}", value


# ---------------------------------------------------------------------------
# Triple extraction


def triples(document: str) -> list[dict[str, str]]:
    """Deterministic (subject; relation; object) triples, one per sentence of
    at least three words: first word, second word, the next five words."""
    out = []
    for sentence in sentences(document):
        words = _WORD.findall(sentence)
        if len(words) >= 3:
            out.append({"subject": words[0], "relation": words[1], "object": " ".join(words[2:7])})
    return out


def triples_answer(document: str) -> str:
    return msgspec.json.encode({"triples": triples(document)}).decode()
