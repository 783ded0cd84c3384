"""The shapes of coordination the con needle may swap: an allow-list, not one more refusal.

Every hand read of unseen text found the defects of con among phrase-level
coordinations (noun, adjective, preposition conjuncts), in readings where
"and" and "or" say the same: one head sorted by two modifiers, bare nouns
under one restriction, a collective spelled out, a negative or universal
operator over the pair. Those readings are not visible in a parse, so no
refusal catches them all. A swap between two finite verbs, each with
something of its own, has none of them: "A happened and B happened" is two
claims, "A happened or B happened" one weaker claim, whatever the nouns
inside. See ARCHITECTURE.md, "con's allow-list", and benchmarks/RESULTS.md.

`shape_refusal(token)` says why the coordination at the conjunction `token`
has no safe shape ("" when it has one). The safe shapes:
- two verbs, both finite: by their own tense or a finite auxiliary they share
  ("has fired and replaced"), never infinitives or participles ("allowing it
  to regroup and adapt": free choice under a permission); each with a word
  of its own beyond a subject, an auxiliary or an adverb ("Friday came and
  passed": two bare verbs name the two ends of one event); not a question
  ("is X ..., and could Y ...?": both are asked either way); not a noun
  pair the tagger read as verbs ("abuse by clergy and lay people"); not in a
  relative clause ("farmers who grew wheat and sold barley": the relative
  restricts one set, which "or" names again);
- noun phrases that each name their own referent (a determiner or
  possessive of their own, or a proper name) as the objects of a finite
  verb, directly or through its preposition ("sold a boat and a trailer");
  not under a verb of composition ("comprises a bank and a firm": the object
  spells out a whole's members);
- two predicative adjectives under a finite copula ("were long and bitter").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.needles.edits import SUBJECT_DEPS, finite_verb

if TYPE_CHECKING:
    from spacy.tokens import Token

_AUX_DEPS = frozenset({"aux", "auxpass"})
# dependents that do not make a verb more than a bare verb
_BARE_DEPS = SUBJECT_DEPS | _AUX_DEPS | frozenset({"neg", "advmod", "cc", "conj", "punct", "prt", "mark", "dep"})
# verbs whose object spells out the members of their subject ("comprises", "consists of", "is composed of"; "is
# made up of" is matched apart): WordNet's comprise.v.01 (consist, comprise) and compose.v.02 (compose, make up)
_COMPOSITION_VERBS = frozenset({"comprise", "consist", "compose", "constitute"})


def shape_refusal(token: Token) -> str:
    """Why the coordination at `token` ("and"/"or") has no safe shape, or ""."""
    first = token.head
    second = next((c for c in first.children if c.dep_ == "conj" and c.i > token.i), None)
    if second is not None and first.pos_ in ("NOUN", "PROPN") and second.pos_ in ("NOUN", "PROPN"):
        return _noun_phrase_refusal(first)
    if second is not None and first.pos_ == "ADJ" == second.pos_ and first.dep_ == "acomp":
        return "" if finite_verb(first.head) else "not finite verbs"  # predicative: "the talks were long and bitter"
    if second is None or first.pos_ not in ("VERB", "AUX") or second.pos_ not in ("VERB", "AUX"):
        return "not two verbs"
    if _question(first) or _question(second):
        return "question"
    if _nouns_read_as_verbs(token, second):
        return "nouns read as verbs"
    if not (finite_verb(first) and (finite_verb(second) or _sharing_auxiliary(first, second))):
        return "not finite verbs"
    if not (_own_word(first, token) and _own_word(second, token)):
        return "bare verbs"
    if any(v.dep_ == "relcl" for v in (first, *first.ancestors)):
        return "relative clause"
    return ""


def _noun_phrase_refusal(first: Token) -> str:
    verb = first.head if first.dep_ in ("dobj", "dative") else first.head.head if first.dep_ == "pobj" else None
    if verb is None or verb.pos_ not in ("VERB", "AUX"):
        return "not a verb's object"
    if not finite_verb(verb):
        return "not finite verbs"  # "threw cold water on investigating A and B": the phrase's operator scopes over the pair
    if verb.lemma_ in _COMPOSITION_VERBS or verb.lemma_ == "make" and any(c.lower_ == "up" for c in verb.children):
        return "members of a whole"  # "a consortium that comprises a bank and a firm": "or" leaves no membership
    if not all(_determined(noun) for noun in (first, *first.conjuncts)):
        return "bare nouns"
    return ""


def _determined(noun: Token) -> bool:
    """A noun phrase that names its own referent: a determiner or possessive of its own, or a proper name."""
    return noun.pos_ == "PROPN" or any(c.dep_ in ("det", "poss") for c in noun.children)


def _sharing_auxiliary(first: Token, second: Token) -> bool:
    """The second verb takes the first's finite auxiliary ("has fired and replaced")."""
    own_aux = any(c.dep_ in _AUX_DEPS for c in second.children)
    return not own_aux and second.tag_ == first.tag_ and first.tag_ in ("VB", "VBN", "VBG")


def _own_word(verb: Token, token: Token) -> bool:
    """A dependent of `verb`'s own beyond its subject, auxiliaries and adverbs
    (the first verb's words stop at the conjunction)."""
    return any(
        c.dep_ not in _BARE_DEPS
        and not (verb.i < token.i < c.i)
        # a noun phrase before the verb as a time modifier ("Friday came and passed": a parser's reading of a
        # subject); after it, a measure is the verb's own ("lasted 281 years")
        and not (c.dep_ == "npadvmod" and c.i < verb.i)
        for c in verb.children
    )


def _nouns_read_as_verbs(token: Token, second: Token) -> bool:
    """A bare noun as a preposition's object right before the conjunction, and the second
    "verb" right after it taking the next noun as its object ("abuse by clergy
    and lay people", "approached by rabbis and lay leadership"): the tagger's
    verb is an adjective, the pair two nouns under one preposition."""
    doc = token.doc
    if token.i == 0 or second.i != token.i + 1 or second.i + 1 >= len(doc):
        return False
    before, after = doc[token.i - 1], doc[second.i + 1]
    bare = not any(c.dep_ in ("det", "poss", "nummod") for c in before.children)  # not "with an undefeated record and outscored"
    return bare and before.dep_ == "pobj" and after.tag_ in ("NN", "NNS", "NNP", "NNPS") and after.head.i == second.i


def _question(verb: Token) -> bool:
    """A sentence ending in "?", or an auxiliary (or the verb, itself one) before the verb's subject ("could the Hyperloop become")."""
    if verb.sent[-1].text == "?":
        return True
    subject = next((c for c in verb.children if c.dep_ in SUBJECT_DEPS), None)
    if subject is None:
        return False
    return verb.pos_ == "AUX" and verb.i < subject.i or any(c.dep_ in _AUX_DEPS and c.i < subject.i for c in verb.children)
