"""Words in the negated clause that a "not" would interact with (pure
functions of a sentence's parse, for `engine.needles.negation`).

`engine.needles.negation.has_negation` refuses a sentence that holds a
negation or an overtly negative word anywhere ("never", "nothing",
"hardly"). Some words are negative or downward only in a use the parse
tells apart (this module is the one place that decides "few" and "little"), and a "not" on the clause that holds them gives a double
negative that reads as the opposite of a plain denial, or a scope that
flips. `polarity_refusal` says which, or "":

- a negative quantity: "little" without "a" as a quantity, not a size
  ("there is little evidence" -> "there is not little evidence", "did
  little to", "was little more than", "with little difficulty"; not "the
  little house", "little girls", "a little", "little-known"); "few"
  without "a", "the" or "every" ("saw very few visitors", "with few
  exceptions"; not "a few", "the few who stayed");
- a downward frequency adverb the sentence check does not hold ("has
  rarely opened" -> "has not rarely opened");
- "without" in the clause ("left without paying" -> "did not leave without
  paying", which reads as "paid whenever he left");
- a universally quantified subject ("all of the ships", "every student",
  "each of the villages", "the fishermen all", "both brothers"): "All of
  the ships did not return" reads as "none returned" as readily as "not
  all returned", so the negation's scope is the reader's guess.

The clause is the root and what depends on it, without the clauses of
their own below it (a relative, adverbial or participial clause, a
reported clause, a conjoined verb): "not" on the root does not reach a
"little" in "a man who had little money". An infinitive or other open
complement ("tried to leave without paying") is in it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

# dependents that head a clause of their own: a "not" on the root does not reach into them
_OWN_CLAUSE_DEPS = frozenset({"relcl", "acl", "advcl", "ccomp", "csubj", "csubjpass", "parataxis", "conj"})
# determiners after which "few" or "little" is no negative quantity ("a few", "the few who", "every few days")
_POSITIVE_BEFORE = frozenset({"a", "an", "the", "every", "those", "these"})
# noun dependents that make "little" on the noun a size ("the little house", "his little boat", "two little boats")
_DETERMINING_DEPS = frozenset({"det", "poss", "nummod", "predet"})
# downward adverbs of frequency or degree that the sentence check (negation.NEGATIVE_WORDS) does not hold
DOWNWARD_ADVERBS = frozenset({"rarely", "infrequently"})
# quantifiers that take scope over a negation when they quantify the subject
UNIVERSAL_QUANTIFIERS = frozenset({"all", "every", "each", "both", "everyone", "everybody", "everything"})


def polarity_refusal(sent: Span, root: Token) -> str:
    """Why a "not" on `root` would interact with a word of its clause, or ""."""
    for t in clause_tokens(root):
        lower = t.lower_
        if lower == "little" and negative_little(sent, t):
            return "negative quantity"
        if lower == "few" and negative_few(sent, t):
            return "negative quantity"
        if lower in DOWNWARD_ADVERBS:
            return "downward adverb"
        if lower == "without":
            return "without in the clause"
    if universal_subject(root):
        return "universal quantifier subject"
    return ""


def clause_tokens(root: Token) -> list[Token]:
    """The root's clause: the root and its dependents, not entering a clause of
    their own below it (`_OWN_CLAUSE_DEPS`; a conjoined noun stays in)."""
    out: list[Token] = []
    stack = [root]
    while stack:
        token = stack.pop()
        out.append(token)
        for child in token.children:
            if child.dep_ in _OWN_CLAUSE_DEPS and (child.dep_ != "conj" or child.pos_ in ("VERB", "AUX")):
                continue
            stack.append(child)
    return sorted(out, key=lambda t: t.i)


def _previous(sent: Span, token: Token) -> str:
    return token.nbor(-1).lower_ if token.i > sent.start else ""


def _in_name(token: Token) -> bool:
    """"Little Rock", "The Few": the word is part of a name, no quantity."""
    return token.pos_ == "PROPN" or token.ent_iob_ in ("B", "I")


def _hyphenated(sent: Span, token: Token) -> bool:
    """"little-known", "few-word": the word is the first part of a compound."""
    return token.i + 1 < sent.end and token.nbor().text == "-" and not token.whitespace_


def negative_little(sent: Span, token: Token) -> bool:
    """"little" as a negative quantity: not after "a" ("a little"), not in a
    hyphenated compound, and either standing for a quantity itself (object,
    adverb, "little more than") or on a bare singular noun ("little
    evidence"); on a noun with a determiner, possessor or number, or on a
    plural, it is a size ("the little house", "little girls")."""
    if _previous(sent, token) in _POSITIVE_BEFORE or _hyphenated(sent, token) or _in_name(token):
        return False
    if token.i + 2 < sent.end and token.nbor().lower_ == "by" and token.nbor(2).lower_ == "little":
        return False  # "little by little"
    if token.dep_ != "amod":
        return True  # "did little to", "changed little", "was little more than", "for little"
    noun = token.head
    if noun.tag_ in ("NNS", "NNPS"):
        return False
    return not any(c.dep_ in _DETERMINING_DEPS for c in noun.children)


def negative_few(sent: Span, token: Token) -> bool:
    """"few" as a negative quantity: not after "a", "the", "every" ("a few",
    "quite a few", "the few who stayed", "every few days")."""
    if _previous(sent, token) in _POSITIVE_BEFORE or _hyphenated(sent, token) or _in_name(token):
        return False
    if token.dep_ == "amod" and any(c.dep_ == "poss" or c.lower_ in _POSITIVE_BEFORE for c in token.head.children if c.i < token.i):
        return False  # "the very few who stayed", "their few belongings"
    return True


def universal_subject(root: Token) -> bool:
    """A subject quantified universally ("all of the ships", "every student",
    "all the ships", "both brothers"), or a quantifier floated off it to the
    verb ("the fishermen all voted", "the brothers both signed")."""
    for subject in root.children:
        if subject.dep_ not in ("nsubj", "nsubjpass"):
            continue
        if subject.lower_ in UNIVERSAL_QUANTIFIERS:
            return True  # "All of the ships", "Each of the villages", "Everyone"
        if any(c.lower_ in UNIVERSAL_QUANTIFIERS and c.dep_ in ("det", "predet", "preconj", "appos", "dep", "quantmod", "amod") for c in subject.children):
            return True  # "every student", "all the ships", "both X and Y", "the fishermen all"
    return any(c.lower_ in UNIVERSAL_QUANTIFIERS and c.i < root.i and c.dep_ in ("dep", "advmod", "appos", "det", "predet") for c in root.children)
