"""Downward-entailing and non-veridical operators above a coordination: the
con rule's issue-27 session-11 class, a pure check of the parse.

Under an operator that licenses a negative-polarity item ("any", "ever", "at
all": "refused to ever sell any of it", "before anyone saw it", "too tired to
eat anything", "reluctant to ever say") a reader takes "A or B" and "A and B"
as saying the same: "without a pilot or a radio" = "without a pilot and a
radio" (neither), "despite rumours of A or fears of B". So the swap is no
needle there. engine.needles.conjunctions already refuses the plainest of
them ("not", "no", "never", "without", "than", "before", "unless", "fail",
"refuse", "deny", "prevent", "ban", universal determiners) and
engine.needles.coordination_scope the negative nouns and quantities
("failure to", "little interest in", "few ships"); this module holds the
rest of the class, by grammatical kind, each word chosen because it licenses
"any"/"ever" in its complement (the classic licensor classes of
Ladusaw 1979 and Linebarger 1987: no maintained machine-readable list ships
in a package this project uses, WordNet has no polarity, so the lists are
short and closed here):

- a negative or aversive verb whose complement holds the coordination
  ("doubts that A or B", "refrained from selling A and B", "hesitated to
  close A or B"); an aspectual "stop"/"quit" only over a clause ("stopped
  funding A and B"), not over a thing ("stopped a car and a van");
- an adjective of unlikelihood, unwillingness or absence ("unlikely that",
  "reluctant to", "unable to", "free of A and B", "devoid of"), above the
  coordination or as the predicate of a "be" above it ("It is unlikely that
  A or B will ...");
- "too" + adjective or adverb + infinitive ("too strong to repair A and B");
- a preposition of concession or indifference ("despite", "in spite of",
  "notwithstanding", "regardless of", "irrespective of"): the
  claim holds whichever member is meant;
- a frequency adverb of negative quantity on a verb above ("rarely sold crab
  or lobster", as "seldom", which negation's word list holds already);
- the standard of an equative ("as fast as A and B": "as fast as anyone")
  or of a comparative ("than"), also where the parser hangs it outside the
  "as"/"than" phrase (read linearly up to a comma);
- a verb of hindering over "from" + an act ("kept the sheep from straying or
  drowning", "stop/bar/deter ... from"), and a noun with a negative
  adjective ("an insufficient basis to stop or arrest");
- the first half of a comparative correlative ("The longer the talks and
  the delays, the angrier ..."), a condition on the second;
- a conditional or temporal antecedent: the coordination inside a clause
  opened by "if", "unless", "before", "lest" (not "as if": a manner);
- the restrictor of a universal: inside the relative clause of "anyone",
  "everyone", "anything", ... ("anyone who parks on A or B"), or the clause
  of "whoever"/"whatever".

A coordination joining two clauses with subjects of their own under the
operator's verb ("she refused, and he left") has the operator in one
conjunct only and is left to the other checks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.needles.coordination_lists import is_dash

if TYPE_CHECKING:
    from spacy.tokens import Token

# verbs whose object or complement clause licenses "any"/"ever" ("doubt that anyone ever ...")
_DE_VERBS = frozenset("doubt refrain hesitate abstain forgo forego forbear shun".split())
# aspectual verbs that are downward only over a clause ("stopped selling A and B")
_DE_ASPECTUAL = frozenset("stop quit halt discontinue".split())
# adjectives of unlikelihood, unwillingness, inability or absence ("unlikely that anyone ever ...")
_DE_ADJECTIVES = frozenset(
    "unlikely improbable impossible doubtful dubious reluctant unwilling loath loth averse hesitant disinclined "
    "unable incapable unaware ignorant free devoid sceptical skeptical insufficient inadequate".split()
)
# prepositions of concession or indifference (and the nouns of their multi-word forms)
_DE_PREPOSITIONS = frozenset("despite notwithstanding spite regardless irrespective".split())
# frequency adverbs of negative quantity not in negation's word lists
_DE_ADVERBS = frozenset({"rarely", "infrequently"})
# subordinators that open an antecedent: a condition, or an event that has not happened yet
_DE_MARKS = frozenset({"if", "unless", "before", "lest"})
# verbs that hinder an act named by their "from" + gerund ("kept them from straying or drowning")
_HINDERING_VERBS = frozenset(
    "keep stop bar prevent prohibit ban deter discourage block restrain dissuade hinder preclude save".split()
)
# universal pronouns whose relative clause restricts them ("anyone who ...")
_UNIVERSAL_PRONOUNS = frozenset(
    "anyone anybody anything everyone everybody everything whoever whatever whichever whomever".split()
)
# comparatives the tagger may tag as plain adjectives or adverbs ("the further", "the farther")
_COMPARATIVE_WORDS = frozenset({"more", "less", "fewer", "further", "farther", "longer", "sooner"})
_CLAUSE_DEPS = frozenset({"xcomp", "ccomp", "pcomp", "advcl", "csubj"})
_SUBJECTS = frozenset({"nsubj", "nsubjpass", "csubj", "expl"})


def polarity_refusal(token: Token) -> str:
    """Why the swap of the conjunction `token` says the same under a
    downward-entailing or non-veridical operator ("" when none is above)."""
    if comparative_antecedent(token):
        return "antecedent"
    if in_comparison_standard(token):
        return "downward operator"
    first = token.head
    while first.dep_ == "conj" and first.head.i != first.i:
        first = first.head
    if token.head.pos_ in ("VERB", "AUX") and _own_subject(token):
        # two clauses: only an operator above both counts, or the subordinator of the first,
        # which opens both ("if the wind rises or the tide turns")
        if any(c.dep_ == "mark" and c.lower_ in _DE_MARKS and not _as_if(c) for c in first.children):
            return "antecedent"
        chain = list(first.ancestors)
        below = first
    else:
        chain = [first, *first.ancestors]
        below = None
    for t in chain:
        if below is not None and below.dep_ == "conj" and any(c.dep_ in _SUBJECTS for c in below.children):
            return ""  # a clause of its own joined to the operator's: "the mayor doubts it, and the council sold A and B"
        why = _licensor(t, below)
        if why:
            return why
        below = t
    return ""


def _own_subject(token: Token) -> bool:
    later = [c for c in token.head.children if c.dep_ == "conj" and c.i > token.i]
    return bool(later) and any(c.dep_ in _SUBJECTS for c in later[0].children)


def _licensor(t: Token, below: Token | None) -> str:
    """The operator `t` (an ancestor of the coordination, or its first
    conjunct) licenses negative polarity in the part `below` it (the child
    of `t` on the path down to the coordination; None for `t` itself)."""
    lemma = t.lemma_.lower()
    lower = t.lower_
    clausal = below is not None and below.dep_ in _CLAUSE_DEPS
    if t.pos_ in ("VERB", "AUX"):
        if lemma in _DE_VERBS and below is not None and below.dep_ not in _SUBJECTS:
            return "downward operator"  # "doubt that A or B", "refrained from selling A and B"
        if lemma in _DE_ASPECTUAL and clausal and below.tag_ == "VBG":
            return "downward operator"  # "stopped funding A and B"
        if any(c.dep_ == "advmod" and c.lower_ in _DE_ADVERBS for c in t.children):
            return "downward operator"  # "rarely sold crab or lobster"
        if any(c.dep_ == "mark" and c.lower_ in _DE_MARKS and not _as_if(c) for c in t.children):
            return "antecedent"  # "if the wind or the tide rises", "before A or B arrived"
        if lemma == "be" and clausal and any(c.dep_ in ("acomp", "attr") and c.lemma_.lower() in _DE_ADJECTIVES for c in t.children):
            return "downward operator"  # "It is unlikely that A or B will ..."
        if any(c.dep_ in _SUBJECTS and c.lower_ in _UNIVERSAL_PRONOUNS for c in t.children) and t.dep_ in ("csubj", "ccomp", "advcl", "relcl", "pcomp"):
            return "universal restrictor"  # "whoever parks on A or B"
        if lemma in _HINDERING_VERBS and below is not None and below.lower_ == "from" and _gerund_object(below):
            return "downward operator"  # "kept the sheep from straying or drowning"
    if lower == "as" and below is not None and _equative(t):
        return "downward operator"  # "as fast as the old ferry or the hovercraft" = "as fast as either"
    if t.pos_ in ("ADJ", "ADV") and below is not None:
        if lemma in _DE_ADJECTIVES or lower in _DE_ADJECTIVES:
            return "downward operator"  # "reluctant to sell A or B", "free of ice and debris"
        if clausal and any(c.dep_ == "advmod" and c.lower_ == "too" for c in t.children):
            return "downward operator"  # "too strong to repair A and B"
    if t.pos_ in ("NOUN", "PROPN") and below is not None and below.dep_ in ("acl", "relcl", "prep"):
        # not "free": before a noun it means without charge ("a free ferry to A and B")
        if any(c.dep_ == "amod" and c.lemma_.lower() in _DE_ADJECTIVES - {"free"} for c in t.children):
            return "downward operator"  # "an insufficient basis to stop or arrest", "a reluctant partner in A and B"
    if lower in _DE_PREPOSITIONS and below is not None:
        return "downward operator"  # "despite rumours of A or fears of B", "regardless of A and B"
    if lower in _UNIVERSAL_PRONOUNS and below is not None and below.dep_ in ("relcl", "acl"):
        return "universal restrictor"  # "anyone who parks on A or B"
    return ""


def _gerund_object(preposition: Token) -> bool:
    """A "from" whose object is an act ("from straying"), not a place or a
    source ("kept the nets from the old boat")."""
    if preposition.dep_ != "prep":
        return False
    return any(
        c.dep_ == "pcomp" and c.tag_ == "VBG"
        # the tagger's noun "fishing" in "from fishing or camping": a bare -ing word
        or c.dep_ == "pobj" and c.lower_.endswith("ing") and not any(d.dep_ in ("det", "poss") for d in c.children)
        for c in preposition.children
    )


def _equative(preposition: Token) -> bool:
    """The second "as" of "as ADJ as": its object is the standard of an
    equative comparison, which licenses "any" ("as fast as anyone")."""
    degree = preposition.head
    return degree.pos_ in ("ADJ", "ADV") and degree.i < preposition.i and any(
        c.lower_ == "as" and c.dep_ == "advmod" and c.i < degree.i for c in degree.children
    )


def in_comparison_standard(token: Token) -> bool:
    """Both conjuncts of the coordination at `token` lie after the second
    "as" of "as ADJ as" or the "than" of a comparative, in the same stretch
    (no comma, semicolon, colon or dash between): the standard of the
    comparison ("as idle as the hope that the tide would turn and stay",
    the session-11 ruling), which the parser often hangs outside the "as"
    or "than" phrase, so `_equative` on the tree misses it. Not "as well
    as", which adds rather than compares."""
    first = token.head
    while first.dep_ == "conj" and first.head.i != first.i:
        first = first.head
    doc = token.doc
    for k in range(first.i - 1, token.sent.start, -1):
        word = doc[k]
        if word.text in (",", ";", ":") or is_dash(word):
            return False
        if word.lower_ in ("than", "as") and _in_subject_above(first, word):
            return False  # "Less than 9 percent of the boats had A or B": the comparison is in the subject
        if word.lower_ == "than" and not word.nbor().tag_ == "CD" and any(t.tag_ in ("JJR", "RBR") or t.lower_ in _COMPARATIVE_WORDS for t in doc[token.sent.start : k]):
            return True
        if word.lower_ == "as" and k - 2 >= token.sent.start:
            degree, opener = doc[k - 1], doc[k - 2]
            adjectival = degree.pos_ in ("ADJ", "ADV") or degree.tag_ == "VBN" and degree.dep_ == "acomp"  # "as doomed as"
            if opener.lower_ == "as" and adjectival and degree.lower_ != "well":
                return True
    return False


def _in_subject_above(first: Token, word: Token) -> bool:
    """`word` lies in the subject of `first` or of a verb above it."""
    return any(
        c.dep_ in _SUBJECTS and c.left_edge.i <= word.i <= c.right_edge.i for t in (first, *first.ancestors) for c in t.children
    )


def comparative_antecedent(token: Token) -> bool:
    """`token` lies in a comparative correlative: a "the" + comparative, then
    after a comma another ("The more wind and rain there is, the later the
    ferry sails"; "the further A and the less B, the more C", anywhere in the
    sentence: "Economists said the higher ..."), and `token` between the two.
    The first half is a condition on the second and licenses "any" like
    "if"; the second half is its consequent, a claim of its own."""
    words = list(token.sent)

    def comparative_at(k: int, loose: bool = False) -> bool:
        if k + 1 >= len(words) or words[k].lower_ != "the":
            return False
        word = words[k + 1]
        if word.tag_ in ("JJR", "RBR") or word.lower_ in _COMPARATIVE_WORDS:
            return True
        # after a first half, the tagger may miss the second comparative ("the angrier": NN)
        return loose and word.is_alpha and word.lower_.endswith("er")

    start = next((k for k in range(len(words)) if comparative_at(k)), None)
    if start is None:
        return False
    def second_half_at(k: int) -> bool:  # ", the ..." or ", then the ..."
        before = k - 2 if words[k - 1].lower_ == "then" else k - 1
        return before > start and words[before].text == "," and comparative_at(k, loose=True)

    second = next((k for k in range(start + 2, len(words)) if second_half_at(k)), None)
    return second is not None and words[start].i <= token.i < words[second].i


def _as_if(mark: Token) -> bool:
    """The "if" of "as if"/"even as if": a manner, not a condition."""
    return mark.lower_ == "if" and mark.i > 0 and mark.nbor(-1).lower_ == "as"
