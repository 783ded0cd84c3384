"""Triple-based similarity: parse a judge's extracted triples, canonicalise
them, and compare the two documents' sets by Jaccard.

Canonical form of a field (CANON_VERSION): Unicode NFKD with combining
marks dropped (accents stripped), lowercased; apostrophes and full stops
deleted ("U.S." → "us", "Newton's" → "newtons"), every other punctuation
character replaced by a space ("well-known" → "well known"); whitespace
collapsed; one leading article (a, an, the) removed. The relation is then
lemmatised with spaCy, token by token ("was born in" → "be bear in"), so
tense and number do not separate identical facts.

Score: 100·|A∩B|/|A∪B| over exact matches of canonical triples. When one
document yields triples and the other none, the score is 0. When neither
yields any (empty union) the similarity is undefined: `jaccard` returns
None and the prompt reports the item `unparseable` ("no triples in either
document"), never a default score.
"""

from __future__ import annotations

import functools
import re
import unicodedata

import msgspec

from engine.prompts.parse import FENCED_BLOCK, THINK_BLOCK

CANON_VERSION = "triples-canon-v1"

Triple = tuple[str, str, str]

TRIPLES_JSON_SCHEMA: dict = {
    "type": "object",
    "properties": {
        "triples": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "subject": {"type": "string"},
                    "relation": {"type": "string"},
                    "object": {"type": "string"},
                },
                "required": ["subject", "relation", "object"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["triples"],
    "additionalProperties": False,
}

_RELATION_KEYS = ("relation", "predicate", "verb")
_DELETED = str.maketrans("", "", "'’‘`.")
_LEADING_ARTICLE = re.compile(r"^(?:the|an|a)\s+")


class UnparseableTriples(ValueError):
    """The response is not a list of (subject; relation; object) triples."""


def parse_triples(text: str) -> tuple[Triple, ...]:
    """Triples from a judge's JSON: {"triples": [{subject, relation, object}...]},
    a bare list, items as objects or as three-element lists; fences, text
    around the JSON and <think> blocks are tolerated."""
    body = THINK_BLOCK.sub("", text).strip()
    decoded = _decode_json(body)
    items = decoded.get("triples") if isinstance(decoded, dict) else decoded
    if not isinstance(items, list):
        raise UnparseableTriples('expected a JSON list of triples or an object with a "triples" list')
    triples = []
    for index, item in enumerate(items):
        triples.append(_triple(item, index))
    return tuple(triples)


def _decode_json(body: str) -> object:
    candidates = [block.strip() for block in FENCED_BLOCK.findall(body)] + [body]
    for opening, closing in (("{", "}"), ("[", "]")):
        start, end = body.find(opening), body.rfind(closing)
        if 0 <= start < end:
            candidates.append(body[start : end + 1])
    for candidate in candidates:
        try:
            return msgspec.json.decode(candidate)
        except msgspec.DecodeError:
            continue
    if not body:
        raise UnparseableTriples("empty response")
    raise UnparseableTriples("no valid JSON found (truncated or malformed)")


def _triple(item: object, index: int) -> Triple:
    if isinstance(item, dict):
        relation_key = next((key for key in _RELATION_KEYS if key in item), None)
        fields = (item.get("subject"), item.get(relation_key) if relation_key else None, item.get("object"))
    elif isinstance(item, list) and len(item) == 3:
        fields = tuple(item)
    else:
        raise UnparseableTriples(f"triple {index}: expected an object with subject/relation/object or a 3-item list")
    if not all(isinstance(field, str) for field in fields):
        raise UnparseableTriples(f"triple {index}: subject, relation and object must all be strings")
    return fields  # type: ignore[return-value]


@functools.lru_cache(maxsize=65536)
def canonical_text(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(char for char in decomposed if not unicodedata.combining(char))
    lowered = stripped.lower().translate(_DELETED)
    spaced = "".join(" " if unicodedata.category(char).startswith("P") else char for char in lowered)
    collapsed = " ".join(spaced.split())
    return _LEADING_ARTICLE.sub("", collapsed)


def canonical_triples(triples: tuple[Triple, ...]) -> frozenset[Triple]:
    relations = lemmatise_relations(tuple({canonical_text(relation) for _, relation, _ in triples}))
    return frozenset(
        (canonical_text(subject), relations[canonical_text(relation)], canonical_text(obj))
        for subject, relation, obj in triples
    )


def lemmatise_relations(relations: tuple[str, ...]) -> dict[str, str]:
    """Canonical relation text → its lemmas joined by spaces (cached)."""
    missing = [relation for relation in relations if relation not in _LEMMA_CACHE]
    if missing:
        for relation, doc in zip(missing, load_lemmatiser().pipe(missing), strict=True):
            if len(_LEMMA_CACHE) >= _LEMMA_CACHE_LIMIT:
                _LEMMA_CACHE.clear()
            _LEMMA_CACHE[relation] = " ".join(token.lemma_ for token in doc if not token.is_space)
    return {relation: _LEMMA_CACHE[relation] for relation in relations}


_LEMMA_CACHE: dict[str, str] = {}
_LEMMA_CACHE_LIMIT = 200_000


@functools.cache
def load_lemmatiser():
    """spaCy with only what lemmas need (tagger, attribute ruler, lemmatizer),
    loaded once. Call it at start-up to keep the first triple verdict from
    stalling the event loop for the seconds the model takes to load."""
    from engine.corpus.nlp import load_nlp  # lazily: importing spaCy takes seconds; only triple prompts need it

    return load_nlp(disable=("parser", "ner", "senter"))


def jaccard(first: frozenset[Triple], second: frozenset[Triple]) -> float | None:
    """100·|A∩B|/|A∪B|; None when both sets are empty (undefined)."""
    union = len(first | second)
    if union == 0:
        return None
    return 100.0 * len(first & second) / union
