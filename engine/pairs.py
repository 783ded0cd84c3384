"""Needle/hay document pairs from a prepared corpus, without re-parsing.

Window texts: the sentences of a window joined with their original
whitespace (so a paragraph break inside a window stays a line break).
For rand hay, hay sentences come from a donor document and keep the
donor's whitespace among themselves; the needle sentence is joined to them
with a single space on each side.

Randomness (engine.seeding, keyed by identity, never by order):
- ner: the entity and its replacement: item_rng(seed, "ner", doc_id), so a
  document's ner needle is the same at every position and hay;
- rand hay donor: item_rng(seed, "rand_hay", doc_id), once per (document, seed);
- negative-control partner: item_rng(seed, "negative", doc_id);
- document order per position: item_rng(seed, "order", i, j).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Literal, NamedTuple

import msgspec

from engine.contracts import HAYS, NEEDLES, ConfigError, Pair
from engine.needles import TextEdit, apply_entity
from engine.oracle import check_pair, check_sentence, check_window
from engine.prepare import CORPUS_DB, StoredDocument, stored_summary
from engine.seeding import item_rng
from engine.store import Store

DEFAULT_K = 9


def document_order(doc_ids: Sequence[str], seed: int, i: int, j: int) -> list[str]:
    """The deterministic document order of position (i, j): a seeded
    permutation of the sorted ids, the same for every needle, hay and judge."""
    ids = sorted(doc_ids)
    permutation = item_rng(seed, "order", i, j).permutation(len(ids))
    return [ids[k] for k in permutation]


def join_sentences(document: StoredDocument, start: int, stop: int) -> str:
    """Sentences start..stop-1 with the whitespace originally between them."""
    parts: list[str] = []
    for k in range(start, stop):
        if k > start:
            parts.append(document.gaps[k - 1])
        parts.append(document.sentences[k])
    return "".join(parts)


def reformat_whitespace(text: str) -> str:
    """The same words with only line breaks changed (the null_edit control):
    each paragraph hard-wrapped at 60 columns, paragraphs separated by a blank line."""
    wrapped = "\n\n".join(
        textwrap.fill(p, width=60, break_long_words=False, break_on_hyphens=False) for p in text.split("\n")
    )
    if wrapped == text:
        wrapped = text.replace(" ", "\n", 1) if " " in text else text + "\n"
    return wrapped


class _Layout(NamedTuple):
    """A document's text as stored (sentences and the gaps between them) with
    each sentence's span: a window is one slice (= join_sentences, cheaper)."""

    text: str
    starts: list[int]
    ends: list[int]

    @classmethod
    def of(cls, document: StoredDocument) -> _Layout:
        starts, ends, position = [], [], 0
        for k, sentence in enumerate(document.sentences):
            if k:
                position += len(document.gaps[k - 1])
            starts.append(position)
            position += len(sentence)
            ends.append(position)
        return cls(join_sentences(document, 0, len(document.sentences)), starts, ends)


class Corpus:
    """Read access to a prepared corpus; decoded documents are cached in memory."""

    def __init__(self, store: Store, doc_ids: tuple[str, ...]) -> None:
        self.store = store
        self.doc_ids = doc_ids
        self._index = {d: n for n, d in enumerate(doc_ids)}
        self._cache: dict[str, StoredDocument] = {}
        self._layouts: dict[str, _Layout] = {}
        self._sentence_checks: dict[tuple[str, str, str, str], str | None] = {}
        self._decoder = msgspec.msgpack.Decoder(StoredDocument)
        # per-(document, seed) choices: drawn once, reused at every position
        self._choices: dict[tuple[str, int, str], object] = {}
        self.oracle_failures = 0
        self.oracle_failure_reasons: dict[str, int] = {}

    @classmethod
    def open(cls, store: Store) -> Corpus:
        if stored_summary(store) is None:
            raise ConfigError(f"{store.path}: no prepared corpus in this store; run `needlejudge prepare --store {store.path}`")
        with store.begin(db=store.db(CORPUS_DB)) as txn:
            ids = tuple(bytes(k).decode("utf-8") for k in txn.cursor().iternext(keys=True, values=False))
        if not ids:
            raise ConfigError(f"{store.path}: the prepared corpus kept no documents; lower the length bounds and prepare again")
        return cls(store, ids)

    def __len__(self) -> int:
        return len(self.doc_ids)

    def document(self, doc_id: str) -> StoredDocument:
        cached = self._cache.get(doc_id)
        if cached is None:
            raw = self.store.get_raw(CORPUS_DB, doc_id.encode("utf-8"))
            if raw is None:
                raise KeyError(f"document {doc_id!r} is not in the prepared corpus at {self.store.path}")
            try:
                cached = self._cache[doc_id] = self._decoder.decode(raw)
            except msgspec.ValidationError as error:  # a store prepared by an older needlejudge
                raise ConfigError(
                    f"{self.store.path}: document {doc_id!r} is stored in an older format ({error}); "
                    f"run `needlejudge prepare --store {self.store.path}` again"
                ) from None
        return cached

    def _layout(self, document: StoredDocument) -> _Layout:
        layout = self._layouts.get(document.doc_id)
        if layout is None:
            layout = self._layouts[document.doc_id] = _Layout.of(document)
        return layout

    # -- choices keyed by identity -------------------------------------------
    def donor(self, doc_id: str, seed: int) -> str | None:
        """The rand-hay donor of `doc_id`: one per (document, seed)."""
        return self._other(doc_id, seed, "rand_hay")

    def _other(self, doc_id: str, seed: int, purpose: str) -> str | None:
        if len(self.doc_ids) < 2:
            return None
        key = (doc_id, seed, purpose)
        if key not in self._choices:
            pick = int(item_rng(seed, purpose, doc_id).integers(len(self.doc_ids) - 1))
            own = self._index.get(doc_id)
            if own is not None and pick >= own:
                pick += 1
            self._choices[key] = self.doc_ids[pick]
        return self._choices[key]  # type: ignore[return-value]

    def needle_sentence(self, doc_id: str, needle: str, seed: int) -> tuple[int, str, str]:
        """(sentence index, sentence, perturbed sentence) of a needle type."""
        document = self.document(doc_id)
        if needle == "none":
            text = document.sentences[document.middle]
            return document.middle, text, text
        if needle in ("neg", "con"):
            edit = document.neg if needle == "neg" else document.con
            return edit.sentence, document.sentences[edit.sentence], edit.perturbed
        if needle == "ner":
            return self._ner_choice(doc_id, seed)[:3]
        raise ValueError(f"needle must be one of {NEEDLES}, got {needle!r}")

    def needle_edit(self, doc_id: str, needle: str, seed: int) -> TextEdit | None:
        """What the needle changed in its sentence (None for "none"): the audit trail."""
        if needle == "none":
            return None
        if needle == "ner":
            return self._ner_choice(doc_id, seed)[3]
        if needle in ("neg", "con"):
            document = self.document(doc_id)
            return (document.neg if needle == "neg" else document.con).edit
        raise ValueError(f"needle must be one of {NEEDLES}, got {needle!r}")

    def _ner_choice(self, doc_id: str, seed: int) -> tuple[int, str, str, TextEdit]:
        """The seeded entity swap of a document: (sentence index, sentence, perturbed, edit)."""
        key = (doc_id, seed, "ner")
        if key not in self._choices:
            document = self.document(doc_id)
            rng = item_rng(seed, "ner", doc_id)
            option = document.ner_options[int(rng.integers(len(document.ner_options)))]
            replacement = option.replacements[int(rng.integers(len(option.replacements)))]
            before = document.sentences[document.ner_sentence]
            after = apply_entity(before, option, replacement)
            edit = _entity_edit(before, after, option.start, option.end, option.label)
            self._choices[key] = (document.ner_sentence, before, after, edit)
        return self._choices[key]  # type: ignore[return-value]

    # -- windows ---------------------------------------------------------------
    def _hay(self, document: StoredDocument, center: int, i: int, j: int, joiner: str | None) -> tuple[str, str] | None:
        """(text before, text after) the needle around sentence `center`;
        joiner None: the document's own whitespace, else that string."""
        if i < 0 or j < 0:
            raise ValueError(f"positions must be >= 0, got i={i}, j={j}")
        if center - i < 0 or center + j >= len(document.sentences):
            return None
        text, starts, ends = self._layout(document)
        prefix = suffix = ""
        if i:
            prefix = text[starts[center - i] : starts[center]] if joiner is None else text[starts[center - i] : ends[center - 1]] + joiner
        if j:
            suffix = text[ends[center] : ends[center + j]] if joiner is None else joiner + text[starts[center + 1] : ends[center + j]]
        return prefix, suffix

    def make_pair(self, doc_id: str, needle: str, hay: str, i: int, j: int, seed: int) -> Pair | None:
        """The pair of one item; None if the window does not fit the document
        or the pair fails the oracle (then counted in `oracle_failures`)."""
        if hay not in HAYS:
            raise ValueError(f"hay must be one of {HAYS}, got {hay!r}")
        center, before, after = self.needle_sentence(doc_id, needle, seed)
        document = self.document(doc_id)
        hay_doc_id = None
        if hay == "orig":
            window = self._hay(document, center, i, j, None)
        else:
            hay_doc_id = self.donor(doc_id, seed)
            if hay_doc_id is None:
                return None
            donor = self.document(hay_doc_id)
            window = self._hay(donor, donor.middle, i, j, " ")
        if window is None:
            return None
        prefix, suffix = window
        pair = Pair(
            doc_id=doc_id,
            needle=needle,  # type: ignore[arg-type]
            hay=hay,  # type: ignore[arg-type]
            i=i,
            j=j,
            original=prefix + before + suffix,
            perturbed=prefix + after + suffix,
            needle_before=before,
            needle_after=after,
            seed=seed,
            hay_doc_id=hay_doc_id,
        )
        return self._verified(pair, document)

    def make_control(self, doc_id: str, kind: Literal["null_edit", "negative"], i: int, j: int, seed: int) -> Pair:
        """An instrument-check item at (i, j) around the middle sentence.

        null_edit: the window against itself with only line breaks changed;
        negative: the window against another document's window of the same
        length (partner chosen once per (document, seed))."""
        document = self.document(doc_id)
        window = self._hay(document, document.middle, i, j, None)
        if window is None:
            raise ValueError(f"document {doc_id!r} has no window at i={i}, j={j}")
        needle = document.sentences[document.middle]
        original = window[0] + needle + window[1]
        partner_id = None
        if kind == "null_edit":
            perturbed, needle_after = reformat_whitespace(original), needle
        elif kind == "negative":
            partner_id = self._other(doc_id, seed, "negative")
            if partner_id is None:
                raise ValueError("a negative control needs at least two documents")
            partner = self.document(partner_id)
            other = self._hay(partner, partner.middle, i, j, None)
            if other is None:
                raise ValueError(f"document {partner_id!r} has no window at i={i}, j={j}")
            needle_after = partner.sentences[partner.middle]
            perturbed = other[0] + needle_after + other[1]
        else:
            raise ValueError(f"control must be 'null_edit' or 'negative', got {kind!r}")
        pair = Pair(
            doc_id=doc_id,
            needle="none",
            hay="orig",
            i=i,
            j=j,
            original=original,
            perturbed=perturbed,
            needle_before=needle,
            needle_after=needle_after,
            seed=seed,
            hay_doc_id=partner_id,
            control=kind,
        )
        reason = check_pair(pair)
        if reason:
            raise AssertionError(f"control {kind} for {doc_id!r} failed its own check: {reason}")
        return pair

    def _verified(self, pair: Pair, document: StoredDocument) -> Pair | None:
        if pair.control:
            reason = check_pair(pair)
        else:
            # check_pair, with the needle-sentence half (a pure function of the
            # document's needle, the same at every position) checked once
            reason = check_window(pair.original, pair.perturbed, pair.needle_before, pair.needle_after)
            if reason is None:
                key = (document.doc_id, pair.needle, pair.needle_before, pair.needle_after)
                if key in self._sentence_checks:
                    reason = self._sentence_checks[key]
                else:
                    options = document.ner_options if pair.needle == "ner" else ()
                    reason = self._sentence_checks[key] = check_sentence(pair.needle, pair.needle_before, pair.needle_after, ner_options=options)
        if reason is None:
            return pair
        self.oracle_failures += 1
        key = reason.split(":", 1)[0]
        self.oracle_failure_reasons[key] = self.oracle_failure_reasons.get(key, 0) + 1
        return None


def _entity_edit(before: str, after: str, start: int, end: int, label: str) -> TextEdit:
    """The edit from `before` to `after`: the entity span start:end, widened to
    whatever else the swap changed around it (an article, a capital)."""
    prefix = 0
    while prefix < min(len(before), len(after)) and before[prefix] == after[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(before), len(after)) - prefix and before[-1 - suffix] == after[-1 - suffix]:
        suffix += 1
    start = min(start, prefix)
    end = max(end, len(before) - suffix)
    return TextEdit(start, end, before[start:end], after[start : len(after) - (len(before) - end)], f"ner:{label}", label)
