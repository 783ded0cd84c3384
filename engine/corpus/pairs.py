"""Needle/hay document pairs from a prepared corpus, without re-parsing.

Window texts (engine.corpus.prepared_corpus): the sentences of a window joined
with their original whitespace (so a paragraph break inside a window stays
a line break). For rand hay, hay sentences come from a donor document and
keep the donor's whitespace among themselves; the needle sentence is joined
to them with a single space on each side.

Randomness (engine.seeding, keyed by identity, never by order):
- ner: the entity and its replacement: item_rng(seed, "ner", doc_id), so a
  document's ner needle is the same at every position and hay;
- rand hay donor: item_rng(seed, "rand_hay", doc_id), once per (document, seed):
  its first pick, then the other documents in its seeded order, the first
  one that has a window none of whose sentences engine.corpus.hay_check
  refuses (the middle one, else the nearest to it; never reaching the
  donor's first HEAD_SENTENCES_LEFT_OUT or last TAIL_SENTENCES_LEFT_OUT sentences);
- negative-control partner: item_rng(seed, "negative", doc_id);
- document order per position: item_rng(seed, "order", i, j).
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator, Sequence
from typing import Literal

from engine.contracts import HAYS, NEEDLES, Pair
from engine.needles.edits import TextEdit, apply_entity
from engine.needles.oracle import check_pair, check_sentence, check_window
from engine.corpus.hay_check import edge_refused
from engine.corpus.prepare import WINDOW_ROOM, StoredDocument
from engine.corpus.prepared_corpus import PreparedCorpus
from engine.seeding import item_rng
from engine.cache.store import Store

DEFAULT_K = WINDOW_ROOM  # the default position grid: 0 <= i, j <= 9 (config `k`)


def document_order(doc_ids: Sequence[str], seed: int, i: int, j: int) -> list[str]:
    """The deterministic document order of position (i, j): a seeded
    permutation of the sorted ids, the same for every needle, hay and judge."""
    ids = sorted(doc_ids)
    permutation = item_rng(seed, "order", i, j).permutation(len(ids))
    return [ids[k] for k in permutation]


def reformat_whitespace(text: str) -> str:
    """The same words with only line breaks changed (the null_edit control):
    each paragraph hard-wrapped at 60 columns, paragraphs separated by a blank line."""
    wrapped = "\n\n".join(
        textwrap.fill(p, width=60, break_long_words=False, break_on_hyphens=False) for p in text.split("\n")
    )
    if wrapped == text:
        wrapped = text.replace(" ", "\n", 1) if " " in text else text + "\n"
    return wrapped


class Corpus:
    """Pairs and controls from a prepared corpus: the seeded choices of each
    document (needle, donor, partner), the windows around them, the oracle."""

    def __init__(self, documents: PreparedCorpus) -> None:
        self.documents = documents
        self.store = documents.store
        self.doc_ids = documents.doc_ids
        # bound once: a pair reads its documents and windows without an extra call
        self.document = documents.document
        self._window = documents.window
        self._index = {d: n for n, d in enumerate(self.doc_ids)}
        self._sentence_checks: dict[tuple[str, str, str, str], str | None] = {}
        # per-(document, seed) choices: drawn once, reused at every position
        self._choices: dict[tuple[str, int, str], object] = {}
        self.oracle_failures = 0
        self.oracle_failure_reasons: dict[str, int] = {}

    @classmethod
    def open(cls, store: Store) -> Corpus:
        """The pairs of the corpus prepared in `store` (ConfigError if none is)."""
        return cls(PreparedCorpus.open(store))

    def __len__(self) -> int:
        return len(self.doc_ids)

    # -- choices keyed by identity -------------------------------------------
    def donor(self, doc_id: str, seed: int) -> str | None:
        """The rand-hay donor of `doc_id` on the default grid: one per (document, seed)."""
        chosen = self.rand_hay_window(doc_id, seed, 0, 0)
        return None if chosen is None else chosen[0]

    def rand_hay_window(self, doc_id: str, seed: int, i: int, j: int) -> tuple[str, int] | None:
        """(donor, center) of the rand hay of `doc_id` at (i, j): the window is
        the donor's `i` sentences before `center` and `j` after; None if no
        document has a clean one. The same for every position of the default
        grid (a smaller window lies inside the (9, 9) one).

        Rand hay is any window of another document, so a window holding a
        sentence engine.corpus.hay_check refuses (a heading that may be fused,
        a subheading, a label) is passed over whole, for the next offset or
        donor: that costs no document and no validity, where dropping such
        sentences from the corpus would cost the prose that shares their shape."""
        reach = max(WINDOW_ROOM, i, j)
        key = (doc_id, seed, f"rand_hay:{reach}")
        if key not in self._choices:
            self._choices[key] = next(
                ((donor_id, center) for donor_id in self._donors(doc_id, seed) if (center := clean_center(self.document(donor_id), reach)) is not None),
                None,
            )
        return self._choices[key]  # type: ignore[return-value]

    def _donors(self, doc_id: str, seed: int) -> Iterator[str]:
        """The other documents in the seeded order of rand-hay donors: the first
        pick as `_other` draws it, then the rest in a seeded permutation."""
        if len(self.doc_ids) < 2:
            return
        rng = item_rng(seed, "rand_hay", doc_id)
        own = self._index.get(doc_id)
        others = [k for k in range(len(self.doc_ids)) if k != own]
        first = int(rng.integers(len(self.doc_ids) - 1))
        yield self.doc_ids[others[first]]
        for k in rng.permutation(len(others)):
            if k != first:
                yield self.doc_ids[others[k]]

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
    def room(self, doc_id: str, needle: str, hay: str, seed: int, reach: int) -> tuple[int, int] | None:
        """Sentences a window of `needle` in `hay` can hold before and after the
        needle sentence: orig, the document's own around it; rand, the donor
        window's chosen for positions up to `reach` (None if no donor has one)."""
        if hay == "orig":
            center = self.needle_sentence(doc_id, needle, seed)[0]
            return center, len(self.document(doc_id).sentences) - 1 - center
        chosen = self.rand_hay_window(doc_id, seed, reach, reach)
        if chosen is None:
            return None
        donor_id, center = chosen
        return center, len(self.document(donor_id).sentences) - 1 - center

    def make_pair(self, doc_id: str, needle: str, hay: str, i: int, j: int, seed: int) -> Pair | None:
        """The pair of one item; None if the window does not fit the document
        or the pair fails the oracle (then counted in `oracle_failures`)."""
        if hay not in HAYS:
            raise ValueError(f"hay must be one of {HAYS}, got {hay!r}")
        center, before, after = self.needle_sentence(doc_id, needle, seed)
        document = self.document(doc_id)
        hay_doc_id = None
        if hay == "orig":
            window = self._window(document, center, i, j, None)
        else:
            chosen = self.rand_hay_window(doc_id, seed, i, j)
            if chosen is None:
                return None
            hay_doc_id, donor_center = chosen
            window = self._window(self.document(hay_doc_id), donor_center, i, j, " ")
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
        window = self._window(document, document.middle, i, j, None)
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
            other = self._window(partner, partner.middle, i, j, None)
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


def _place(k: int, center: int, reach: int) -> str:
    """Where sentence k stands in the window around `center`: "first" after
    the window's start or the center (whose sentence the needle replaces),
    "last" before the window's end or the center, else "inner"."""
    if k in (center - reach, center + 1):
        return "first"
    if k in (center + reach, center - 1):
        return "last"
    return "inner"


# A page keeps its furniture at the ends of its text, where the gate's rules cannot tell it from prose: of 78
# long tuning news documents, 26 end in it (an author's bio, "The views expressed ...", "X contributed to this
# report.", "Do you have information ...? Here's how.", a helpline), in the last 3 sentences in 21, 4 in 3, 5 in 1;
# a related article's teaser opened a read document (its first two sentences). A rand-hay window holds none of them.
HEAD_SENTENCES_LEFT_OUT = 2
TAIL_SENTENCES_LEFT_OUT = 5


def clean_center(document: StoredDocument, reach: int) -> int | None:
    """The sentence of `document` nearest its middle (the middle first, then
    after before before) with `reach` sentences either side, none of them
    among its first HEAD_SENTENCES_LEFT_OUT or last TAIL_SENTENCES_LEFT_OUT, none of which
    engine.corpus.hay_check refused (a quotation's refusals only at the
    window's edges and beside its center, whose sentence the needle
    replaces: no part of the window may open inside a quotation nor end in
    an open one); None if there is none. A window off the
    middle never holds the middle sentence: that is the donor's own "none"
    needle, and a rand-hay pair must not show another document's needle
    sentence (simulation.items reads an identical pair's needle as the one
    middle sentence it holds)."""
    n, middle, refused = len(document.sentences), document.middle, document.hay_refused
    for step in (0, *range(reach + 1, n)):
        for center in ((middle,) if step == 0 else (middle + step, middle - step)):
            if reach + HEAD_SENTENCES_LEFT_OUT <= center < n - reach - TAIL_SENTENCES_LEFT_OUT and not any(
                edge_refused(refused.get(k, ""), _place(k, center, reach)) for k in range(center - reach, center + reach + 1) if k != center
            ):
                return center
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
