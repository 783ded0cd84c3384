"""A plain in-memory corpus for the scheduler's tests (no spaCy, no store).

It implements what `engine.run.design.Design` needs of a corpus (the
`PairSource` protocol) with string rules: each document is a list of
sentences; the needle sentence is the middle one; `neg` inserts "not"
after "was", `con` swaps the first "and" for "or"; `rand` hay takes the
surrounding sentences from another document chosen by (document, seed).
A few documents are too short for the wider positions, so `make_pair`
returns None for them (the scheduler moves on to the next document).
"""

from __future__ import annotations

import hashlib
from typing import Literal

from engine.contracts import Pair

RIVERS = ("Avon", "Severn", "Tay", "Wye", "Exe", "Dee", "Usk", "Tees")


def _sentence(doc: int, n: int) -> str:
    river = RIVERS[(doc + n) % len(RIVERS)]
    return f"In year {1800 + 7 * doc + n} the {river} was wide and the boats of town {doc} sailed on it {n} times."


class MemoryCorpus:
    def __init__(self, documents: int = 40, sentences: int = 9, short_every: int = 7) -> None:
        self.docs: dict[str, list[str]] = {}
        for doc in range(documents):
            count = 3 if short_every and doc % short_every == short_every - 1 else sentences
            self.docs[f"doc-{doc:03d}"] = [_sentence(doc, n) for n in range(count)]
        self.doc_ids: tuple[str, ...] = tuple(self.docs)

    def _donor(self, doc_id: str, seed: int) -> str:
        others = [d for d in self.doc_ids if d != doc_id]
        digest = hashlib.blake2b(f"{doc_id}/{seed}".encode(), digest_size=4).digest()
        return others[int.from_bytes(digest, "little") % len(others)]

    def _window(self, doc_id: str, i: int, j: int) -> tuple[list[str], int] | None:
        sentences = self.docs[doc_id]
        middle = len(sentences) // 2
        if middle - i < 0 or middle + j >= len(sentences):
            return None
        return sentences[middle - i : middle + j + 1], i

    def make_pair(self, doc_id: str, needle: str, hay: str, i: int, j: int, seed: int) -> Pair | None:
        found = self._window(doc_id, i, j)
        if found is None:
            return None
        window, at = found
        hay_doc = None
        if hay == "rand":
            hay_doc = self._donor(doc_id, seed)
            donor = self._window(hay_doc, i, j)
            if donor is None:
                return None
            window = donor[0][:at] + [window[at]] + donor[0][at + 1 :]
        before = window[at]
        after = {"neg": before.replace(" was ", " was not ", 1), "con": before.replace(" and ", " or ", 1)}.get(needle, before)
        perturbed = window[:at] + [after] + window[at + 1 :]
        return Pair(
            doc_id=doc_id, needle=needle, hay=hay, i=i, j=j,  # type: ignore[arg-type]
            original=" ".join(window), perturbed=" ".join(perturbed),
            needle_before=before, needle_after=after, seed=seed, hay_doc_id=hay_doc,
        )

    def room(self, doc_id: str, needle: str, hay: str, seed: int, reach: int) -> tuple[int, int] | None:
        """As make_pair's windows: its own middle's room, and under rand the donor's too."""
        sentences = self.docs[doc_id]
        middle = len(sentences) // 2
        own = (middle, len(sentences) - 1 - middle)
        if hay == "orig":
            return own
        donor = self.docs[self._donor(doc_id, seed)]
        return min(own[0], len(donor) // 2), min(own[1], len(donor) - 1 - len(donor) // 2)

    def make_control(self, doc_id: str, kind: Literal["null_edit", "negative"], i: int, j: int, seed: int) -> Pair:
        found = self._window(doc_id, i, j)
        if found is None:
            raise ValueError(f"{doc_id}: no window at ({i}, {j})")
        window, at = found
        original = " ".join(window)
        if kind == "null_edit":
            other = "\n".join(window)
        else:
            other = " ".join(self.docs[self._donor(doc_id, seed)][: len(window)])
        return Pair(
            doc_id=doc_id, needle="none", hay="orig", i=i, j=j, original=original, perturbed=other,
            needle_before=window[at], needle_after=window[at], seed=seed, control=kind,
        )


def document_order(doc_ids, seed: int, i: int, j: int) -> list[str]:  # type: ignore[no-untyped-def]
    """The real order function of engine.corpus.pairs (pure; imported lazily: no spaCy)."""
    from engine.corpus.pairs import document_order as order

    return order(doc_ids, seed, i, j)
