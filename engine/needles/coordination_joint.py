"""Coordinations whose "and" <-> "or" swap breaks a fixed phrase or a joint
reading (the con rule's issue-27 session-7 classes), each a pure check of
the parse; called by engine.needles.coordination_sense.

- reduplication: the same word on both sides ("years and years", "more and
  more", "round and round"): one phrase of degree or repetition, and "or"
  breaks it;
- particle pair: two bare particles of place or direction ("in and out",
  "back and forth", "up and down", "to and fro"): one movement, not two;
- fixed order: a pair of lower-case words the corpus writes in this order in
  at least `MIN_DOCUMENTS` documents and never the other way round
  ("research and development", "goods and services"): a binomial with one
  meaning. The count is the data's, made once over the corpus before
  parsing (`fixed_pairs`) and read from doc.user_data[FIXED_PAIRS]; without
  it no pair is fixed;
- listed subject: "A, B and C are" parsed with B as A's apposition and C
  as B's conjunct: the list is the subject, and "A, B or C are" breaks
  the agreement (the con rule refuses subjects);
- protection: a coordination guarded against at once ("protection from
  floods and fires", "powerless against A and B", "immune to A and B"):
  "or" names the same dangers.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Token

FIXED_PAIRS = "needlejudge_fixed_pairs"
MIN_DOCUMENTS = 3
# two lower-case words of three letters or more joined by "and"/"or", not inside a hyphenated word
_PAIR = re.compile(r"(?<![\w-])([a-z]{3,}) (and|or) ([a-z]{3,})(?![\w-])")
_PARTICLES = frozenset("in out up down back forth to fro on off over under here there around about through".split())
# words whose "from"/"against"/"to" phrase names what is kept off: every member at once
_PROTECTING = frozenset(
    "protect protection protected shield shielded safe safety immune immunity defend defence defense guard "
    "powerless helpless insulate insulated shelter sheltered exempt exemption spare spared".split()
)
_PROTECTION_PREPOSITIONS = frozenset({"from", "against", "to"})


def fixed_pairs(texts: Iterable[str], min_documents: int = MIN_DOCUMENTS) -> frozenset[str]:
    """The pairs ("research and development") written in at least
    `min_documents` of `texts` and never reversed in any: the binomials of
    this corpus, as lower-case "a and b" / "a or b"."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for text in texts:
        counts.update(set(_PAIR.findall(text)))
    return frozenset(
        f"{a} {c} {b}" for (a, c, b), n in counts.items() if n >= min_documents and a != b and not counts[(b, c, a)]
    )


def joint_refusal(token: Token) -> str:
    """Why the swap of the conjunction `token` breaks a fixed phrase or a
    joint reading ("" when none of these classes holds)."""
    doc = token.doc
    if token.i == 0 or token.i + 1 >= len(doc):
        return ""
    before, after = doc[token.i - 1], doc[token.i + 1]
    if before.is_alpha and before.lower_ == after.lower_:
        return "reduplication"
    if before.lower_ in _PARTICLES and after.lower_ in _PARTICLES and _bare(before) and _bare(after):
        return "particle pair"
    pairs = doc.user_data.get(FIXED_PAIRS) or ()
    if pairs and f"{before.lower_} {token.lower_} {after.lower_}" in pairs and _single_words(before, token, after):
        return "fixed order"
    if _listed_subject(token):
        return "subject"
    if _protection(token):
        return "protection"
    return ""


def _listed_subject(token: Token) -> bool:
    """The coordination continues a subject's apposition after a comma: the
    parser's "A, B and C are" (B the apposition of A, C the conjunct of B)."""
    first = token.head
    while first.dep_ == "conj" and first.head.i != first.i:
        first = first.head
    if first.dep_ != "appos" or first.head.dep_ not in ("nsubj", "nsubjpass"):
        return False
    between = first.doc[first.head.i + 1 : first.left_edge.i]
    return any(t.text == "," for t in between)


def _bare(token: Token) -> bool:
    """A particle standing alone, without an object of its own ("in" of "in
    and out", not "in" of "in Paris and out of town")."""
    return not any(c.dep_ == "pobj" for c in token.children)


def _single_words(before: Token, token: Token, after: Token) -> bool:
    """The conjunction joins the two words themselves, as whole conjuncts or
    as the two modifiers of one noun ("research and development costs"),
    not the last word of one phrase to the first of the next ("the media
    and the public")."""
    return after.head.i == before.i and after.dep_ == "conj" or after.head.i == before.head.i


def _protection(token: Token) -> bool:
    """The coordination is the object of "from"/"against"/"to" under a
    word of protection or immunity ("protection from A and B")."""
    first = token.head
    while first.dep_ == "conj" and first.head.i != first.i:
        first = first.head
    if first.dep_ != "pobj" or first.head.lower_ not in _PROTECTION_PREPOSITIONS:
        return False
    guards = [first.head.head]
    if first.head.head.pos_ in ("VERB", "AUX") and first.head.i > 0:
        guards.append(first.doc[first.head.i - 1])  # "gives the village protection from A and B": the phrase on the verb
    return any(g.lemma_.lower() in _PROTECTING or g.lower_ in _PROTECTING for g in guards)
