"""Whether a coordinated subject may take the other conjunction (a pure check of the parse).

The con rule refuses a coordination that is a subject, because the verb agrees
with it: "The pilot and the engineer are aboard" -> "... or the engineer are".
A subject coordination is swapped only where each of these holds, so that the
swap stays grammatical and makes a different, weaker claim (the protocol's M or
C: "The cities and the ports would have welcomed it" -> "... or the ports would
have ..."):

- agreement: with "or" the verb agrees with the nearest member, so the finite
  word (the first auxiliary, else the verb) shows no number (a modal other
  than the free-choice ones, a past form other than "was"/"were"), or it is a
  plural "have"/"were" and the last member is a plural noun; a "was", a "-s"
  form or a present "are" is refused ("are" and the bare present also read
  generically, "Cats and dogs are kept as pets", where "or" names the same
  kinds);
- members: nouns and names only (no pronoun: "he or I" agrees with neither),
  none counted (a tally, "94 Democrats and 34 Whigs were elected", holds
  together), and not singular nouns under one determiner ("the harbour
  master and former skipper had": one person named by two roles, which
  "or" renames);
- a predicate that needs every member together is refused: a verb of a
  symmetric or joint act ("met", "negotiated", "differ"), an object naming a
  joint act or relation ("signed a deal", "held talks"), a word of jointness,
  a copula with a predicate noun ("were allies", "will be partners"), a
  plural noun said of the subject ("chosen as the defenders"), a verb with
  no complement (intransitives carry the reciprocal readings: "collided",
  "disagreed", "stayed apart"), and a plural pronoun or quantifier later in
  the clause that refers back to the pair ("held their first meeting",
  "each"): with "or" it refers to one member or to none;
- under "can"/"could"/"may"/"might" a subject "or" offers each member, so the
  swap changes nothing (free choice): refused.

Every other check of the con rule (names, entities, "both", lists, operators,
the two-model agreement) still runs on the coordination.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.needles.coordination_joint import _JOINT_WORDS, _PARTY_NOUNS, joint_verb
from engine.needles.coordination_sense import _FREE_CHOICE_MODALS

if TYPE_CHECKING:
    from spacy.tokens import Token

# words after the verb that refer back to the pair as a whole ("their", "each", "both")
_PLURAL_ANAPHORS = frozenset("they them their theirs themselves each both all either neither".split())
_COMPLEMENT_DEPS = frozenset({"dobj", "ccomp", "xcomp", "attr", "acomp", "oprd", "dative"})
_PLURAL_NOUN_TAGS = frozenset({"NNS", "NNPS"})
_OWN_CLAUSE_DEPS = frozenset({"ccomp", "advcl", "relcl", "acl", "parataxis", "conj", "csubj"})


def subject_swap_refused(token: Token) -> bool:
    """Whether the conjunction `token`, coordinating a subject, must be left
    alone (module docstring); False when the swap keeps the agreement and the
    claim is one that "or" weakens rather than breaks."""
    first = token.head
    while first.dep_ == "conj" and first.head.i != first.i:
        first = first.head
    members = [first, *first.conjuncts]
    if len(members) < 2 or any(m.pos_ not in ("NOUN", "PROPN") for m in members):
        return True
    if any(c.dep_ == "nummod" or c.like_num for m in members for c in m.children):
        return True  # a tally ("94 Democrats and 34 Whigs were elected"): the counts hold together
    if _one_referent(members):
        return True  # "The harbour master and former skipper had ...": one person, "or" renames
    verb = first.head
    if verb.pos_ not in ("VERB", "AUX") or joint_verb(verb, "subject"):
        return True
    auxiliaries = sorted((c for c in verb.children if c.dep_ in ("aux", "auxpass")), key=lambda t: t.i)
    finite = auxiliaries[0] if auxiliaries else verb
    if not _keeps_agreement(finite, max(members, key=lambda m: m.i), token.lower_ == "and"):
        return True
    if verb.lemma_.lower() == "be" and any(c.dep_ == "attr" for c in verb.children):
        return True  # a copula and its noun: "were allies", "were just some of those who", "will be partners"
    passive = any(c.dep_ == "auxpass" for c in auxiliaries)
    complements = [c for c in verb.children if c.dep_ in _COMPLEMENT_DEPS]
    if not passive and not complements:
        return True  # "A and B collided", "stayed on board": the reciprocal readings live here
    end = max(m.right_edge.i for m in members)
    for t in verb.subtree:
        if t.i <= end:
            continue
        if t.lower_ in _PLURAL_ANAPHORS or t.lower_ in _JOINT_WORDS or t.lemma_.lower() in _PARTY_NOUNS:
            return True  # "held their first meeting", "signed a deal", "a joint statement"
        if t.tag_ in _PLURAL_NOUN_TAGS and _predicated(t) and _in_own_clause(t, verb):
            return True  # "were chosen as the defenders": one member of "or" is no plural
    return False


def _one_referent(members: list[Token]) -> bool:
    """Singular common nouns under one determiner or possessive, the later
    ones with none of their own ("The harbour master and former skipper
    had been expected to run"): the shape of one thing named by two roles,
    which "or" turns into a gloss of the same thing (the protocol's
    or-gloss, an equivalent swap); two things usually take a determiner
    each ("the pilot and the engineer"). The words cannot tell: abstain."""
    if any(m.pos_ != "NOUN" or m.tag_ != "NN" for m in members):
        return False
    first, later = members[0], members[1:]
    if not any(c.dep_ in ("det", "poss") for c in first.children):
        return False
    return not any(c.dep_ in ("det", "poss", "nummod") for m in later for c in m.children)


def _predicated(noun: Token) -> bool:
    """A noun said of the subject: a predicate noun or object predicate, or the
    object of "as" ("chosen as the defenders")."""
    return noun.dep_ in ("attr", "oprd") or noun.dep_ == "pobj" and noun.head.lower_ == "as"


def _in_own_clause(word: Token, verb: Token) -> bool:
    """`word` belongs to `verb`'s clause or to an open complement of it ("to be
    chosen as ..."), not to a clause with a subject of its own below it."""
    node = word
    while node.i != verb.i and node.head.i != node.i:
        if node.pos_ in ("VERB", "AUX") and node.dep_ in _OWN_CLAUSE_DEPS:
            return False
        node = node.head
    return node.i == verb.i


def _keeps_agreement(finite: Token, last: Token, to_or: bool) -> bool:
    """The finite word agrees after the swap: a modal (not of free choice) or a
    past form other than of "be" shows no number; "have" and "were" need a
    plural last member under "or" (and are plural under "and")."""
    word = finite.lower_
    if finite.tag_ == "MD":
        return word not in _FREE_CHOICE_MODALS
    if finite.tag_ == "VBD" and finite.lemma_.lower() != "be":
        return True
    if word in ("have", "were"):
        return not to_or or last.tag_ in _PLURAL_NOUN_TAGS
    return False
