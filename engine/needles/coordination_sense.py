"""Coordinations whose "and" <-> "or" swap is no needle (the con rule's
issue-27 held-out classes), each a pure check of the parse.

- free choice: under an ability, permission or possibility modal "or"
  already reads as "and" ("visitors can pay by card or in cash", "members
  are able to vote by post and online"), at any length ("may bring dogs,
  cats and birds"), under an adjective of liability ("vulnerable to
  abuse and theft": open to either), and under the infinitive of a word of
  sufficiency ("enough boats to reach A and B": what it makes possible);
- examples and enumerated complements (engine.needles.coordination_lists):
  a list after "such as", "including", "for example", ... names examples,
  which either conjunction names alike, at any length; "the reasons are A
  and B" names the members of a plural;
- shared complement: auxiliaries that share one complement ("what the town
  is and might become"), or prepositions that share one object ("reports
  of and claims about the fire");
- collective: the claim needs the members together ("co-authors of A and
  B", "born to A and B", "the son of a baker and a nurse"), or a phrase
  after them counts them ("A and B, the two ports", "A and B just two
  signs");
- title: the coordination names a post or a body ("director of trade and
  industrial policy", "the committee on roads and bridges", "the culture
  and sport minister"), or sits in the "of" phrase of a treaty's, a law's or
  a society's name written lower-case ("a treaty of amity, commerce, and
  navigation"): "or" names no post and no such name;
- and then engine.needles.coordination_joint's classes (reduplication,
  particle pairs, WordNet's binomials, class and pronoun pairs,
  one-thing compounds, protection) and
  engine.needles.coordination_scope's classes (questions, negative
  operators, category unions, counts, ranks, members of a plural).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.needles.coordination_joint import joint_refusal
from engine.needles.coordination_lists import DASHES, list_refusal
from engine.needles.coordination_parts import parts_refusal
from engine.needles.coordination_scope import scope_refusal

if TYPE_CHECKING:
    from spacy.tokens import Token

# ability and permission: "or" under them offers each option ("can pay by card or in cash"); so do the
# adjectives of liability, "vulnerable to A and B" = "can suffer A or B" (issue 27, session 15), not the
# factual "exposed to" ("exposed to wind and rain": both happened)
_FREE_CHOICE_MODALS = frozenset({"can", "could", "may", "might"})
_FREE_CHOICE_WORDS = frozenset("able allow permit free entitle let possible eligible vulnerable susceptible prone".split())
# readiness ("prepared to sail to A and B"): whether "or" under it offers each option as under "able to"
# is not settled by the protocol (the session-18 reader read "or" under "prepared to" as a weaker claim);
# unsure, so abstain
_READINESS_WORDS = frozenset({"prepared", "ready", "willing"})
# words of sufficiency: their infinitive names what the sufficiency makes possible ("enough boats to
# reach A and B" = "boats that can reach A or B")
_SUFFICIENCY_WORDS = frozenset({"enough", "sufficient", "sufficiently", "adequate", "adequately"})
_KIN_NOUNS = frozenset("son daughter child children sons daughters offspring heir heirs".split())
# the heads of posts and bodies: a coordination in their "of"/"for"/"on" phrase or modifiers names one post
_TITLE_NOUNS = frozenset(
    "director minister secretary head chief chair chairman chairwoman chairperson president commissioner "
    "professor editor officer manager spokesman spokeswoman spokesperson correspondent governor "
    "department ministry committee subcommittee commission office bureau council board agency institute "
    "school faculty division unit directorate secretariat portfolio".split()
)
# nouns that head the names of treaties, laws and bodies, written lower-case in running text ("a treaty
# of amity, commerce, and navigation", "the society of arts and sciences"): "of A and B" is part of the name
_NAME_NOUNS = frozenset(
    "treaty act convention charter pact accord protocol declaration statute society association academy "
    "college museum league federation guild order company court tribunal partnership".split()
)
_TITLE_PREPOSITIONS = frozenset({"of", "for", "on"})
# the words that may open a counting phrase after a coordination (", the only two ports", ", just two signs")
_COUNT_LEAD_INS = frozenset({"a", "the", "just", "only", "all", "these", "those", "its", "their", "our", "his", "her"})
# words that count a pair or a trio by themselves ("the twin pillars", "a pair of", "the trio")
_PAIR_WORDS = frozenset({"twin", "twins", "pair", "duo", "trio"})
_COUNT_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}


def sense_refusal(token: Token) -> str:
    """Why the swap of the conjunction `token` would say the same or name
    no claim ("" when none of these classes holds)."""
    # under possibility or permission each member is offered on its own, at any length: "may bring dogs,
    # cats and birds" = "dogs, cats or birds" (free choice; the fresh read's "may include A, B or C")
    head = token.head
    # not the attributive adjectives of one noun ("could be shown on the steep, curvy and snowy road": one road)
    if _free_choice(token) and (_members(head) == 2 or not _attributive(head)):
        return "free choice"
    listed = list_refusal(token)  # examples, of any length; the members of a plural subject after "are"
    if listed:
        return listed
    if head.pos_ == "AUX" and not any(c.dep_ not in ("nsubj", "nsubjpass", "cc", "conj", "punct", "neg") for c in head.children):
        return "shared complement"  # "what the town is and might become"
    if _collective(head):
        return "collective"
    if _title(head):
        return "title"
    joint = joint_refusal(token)  # reduplication, particle pairs ("in and out of"), ...
    if not joint and _stranded_preposition(token):
        return "shared complement"  # "reports of and claims about the fire": one object for both
    return joint or scope_refusal(token) or parts_refusal(token)  # ...; partitions, ranges, scales, sequences


def _attributive(head: Token) -> bool:
    """The coordination's members modify a noun (adjectives or nouns before it)."""
    first = head
    while first.dep_ == "conj" and first.head.i != first.i:
        first = first.head
    return first.dep_ in ("amod", "compound", "nmod") or first.pos_ == "ADJ" and first.head.pos_ in ("NOUN", "PROPN")


def _stranded_preposition(token: Token) -> bool:
    """The word before the conjunction is a noun's preposition without an
    object of its own: the object after the second conjunct serves both
    nouns ("reports of and claims about the fire"). A verb's ("applied for
    and received a permit") is two acts on one object: "or" weakens it."""
    if token.i == token.sent.start:
        return False
    before = token.nbor(-1)
    return (
        before.pos_ == "ADP"
        and before.dep_ == "prep"
        and before.head.pos_ in ("NOUN", "PROPN")
        and not any(c.dep_ in ("pobj", "pcomp") for c in before.children)
    )


def _members(head: Token) -> int:
    """How many members the coordination of `head` has, counting the
    modifiers the parser hangs beside or under the first instead of as
    conjuncts ("steep, curvy and snowy")."""
    first = head
    while first.dep_ == "conj" and first.head.i != first.i:
        first = first.head
    group = {first.i, *(c.i for c in first.conjuncts)}
    doc = first.doc
    # "steep, curvy and snowy": "steep" under "curvy", followed by a comma
    before = sum(1 for c in first.children if c.dep_ == first.dep_ and c.i < first.i and doc[c.right_edge.i + 1].text == ",")
    if first.head.i == first.i:
        return len(group) + before
    last = max(group)
    beside = sum(1 for c in first.head.children if c.dep_ == first.dep_ and first.i < c.i < last and c.i not in group)
    return len(group) + before + beside


def _clause_verbs(token: Token) -> list[Token]:
    """The verbs and adjectives of `token`'s own clause and of the clauses it
    is the infinitive or conjunct of ("able to vote", "allowed to borrow"):
    where a modal or an "able to" scopes over it. Not a main clause above an
    adjunct ("Given A and B, it could be ...")."""
    out = []
    for t in [token, *token.ancestors]:
        if t.pos_ in ("VERB", "AUX", "ADJ"):
            out.append(t)
            # an infinitive with a subject of its own the parser made a ccomp ("allowing them to regroup")
            infinitive = t.dep_ == "ccomp" and any(c.dep_ == "aux" and c.lower_ == "to" for c in t.children)
            if t.dep_ not in ("xcomp", "conj", "acomp", "amod") and not infinitive:
                break
    return out


def _free_choice(token: Token) -> bool:
    """The coordination lies under "can"/"could"/"may" or "able to",
    "allowed to", "free to", ...: unless it joins a clause with a subject
    of its own ("you can go, and I will stay")."""
    head = token.head
    conjuncts = [c for c in head.children if c.dep_ == "conj" and c.i > token.i]
    if head.pos_ in ("VERB", "AUX") and conjuncts and any(c.dep_ in ("nsubj", "nsubjpass") for c in conjuncts[0].children):
        return False
    for t in _clause_verbs(head):
        if t.lemma_.lower() in _FREE_CHOICE_WORDS or t.pos_ == "ADJ" and t.lower_ in _READINESS_WORDS:
            return True
        if any(c.dep_ == "aux" and c.lower_ in _FREE_CHOICE_MODALS for c in t.children):
            return True
    return _sufficient_to(head)


def _sufficient_to(head: Token) -> bool:
    """The coordination lies under the infinitive of a word of sufficiency
    ("enough money to repair the pier and the slipway", "sufficient staff to
    open on Sundays or at night", "deep enough to take ferries and
    trawlers"): "X enough to do A" says X makes A possible, an ability, so
    "or" offers each option as under "able to" (free choice). The tagger
    may read the infinitive as a noun ("to experiment"): its "to" decides."""
    for t in [head, *head.ancestors]:
        if not any(c.dep_ == "aux" and c.tag_ == "TO" and c.i < t.i for c in t.children):
            continue
        governor = t.head
        if governor.i == t.i:
            return False
        words = [governor, *(c for c in governor.children if c.i < t.i)]
        if any(w.lower_ in _SUFFICIENCY_WORDS for w in words):
            return True
    return False


def _co_word(token: Token) -> bool:
    """A "co-" word: "co-author", "co-guarantors", "cofounder" (as one
    token, or "co" "-" "author" as the tokenizer splits it)."""
    text = token.lower_
    if text.startswith("co-") and len(text) > 4:
        return True
    doc = token.doc
    return text == "co" and token.i + 2 < len(doc) and doc[token.i + 1].text == "-"


def _collective(head: Token) -> bool:
    """The claim needs every member: a "co-" word in the coordination's
    clause, "born to A and B", or "the son of A and B"."""
    first = head
    while first.dep_ == "conj" and first.head.i != first.i:
        first = first.head
    if first.dep_ == "pobj":
        preposition = first.head
        if preposition.lower_ == "to" and preposition.head.lemma_.lower() == "bear":
            return True  # "born to a baker and a nurse"
        if preposition.lower_ == "of" and preposition.head.lower_ in _KIN_NOUNS:
            return True  # "the son of a baker and a nurse"
    if _counted_after(first):
        return True  # "with A and B just two data points", "A and B, the two ports of the bay"
    clause = first
    while clause.pos_ not in ("VERB", "AUX") and clause.head.i != clause.i:
        clause = clause.head
    start, end = first.left_edge.i, max(c.right_edge.i for c in [first, *first.conjuncts])
    # a "co-" word in the clause but outside the conjuncts ("8 acts as author and 36 as co-author" is no joint claim)
    return any(_co_word(t) for t in first.sent if clause.left_edge.i <= t.i <= clause.right_edge.i and not start <= t.i <= end)


def _counted_after(first: Token) -> bool:
    """A phrase after the coordination, in apposition to it, counts its
    members: a number of two or more ("with the ferry and the bridge just
    two of the town's worries", "Cork and Cobh, the two ports") or "both"
    ("A and B, both ports"). The count holds only with "and": "or" leaves
    one member and no claim. The parser hangs the phrase on any member."""
    members = [first, *first.conjuncts]
    last = max(m.i for m in members)
    for m in members:
        for c in m.children:
            if c.dep_ != "appos" or c.i < last:
                continue
            words = [c, *(d for d in c.children if d.i < c.i)]
            if any(_counts(w) for w in words):
                return True
    doc = first.doc
    if any(_swallowed_count(m) for m in members[1:]):
        return True
    # the parser often hangs ", the two ports" elsewhere: read the words after the last member
    i = max(m.right_edge.i for m in members) + 1
    if i >= first.sent.end:
        return False
    if doc[i].text == "," or doc[i].text in DASHES:
        i += 1
    elif not _absolute_with(first):
        return False  # without a comma the count may be the verb's ("sold A and B two days ago")
    while i < first.sent.end and doc[i].lower_ in _COUNT_LEAD_INS:
        i += 1
    if i >= first.sent.end or not _counts(doc[i]):
        return False
    if i + 1 < first.sent.end and doc[i + 1].lower_ in ("%", "percent", "per", "cent"):
        return False  # a figure ("A and B, 60 percent of ..."), not a count of the members
    counted = doc[i].head if doc[i].dep_ == "nummod" else doc[i]
    # not the subject of the main clause after an opening phrase ("Driven by A and B, the two ships sank")
    return counted.dep_ not in ("nsubj", "nsubjpass")


def _swallowed_count(member: Token) -> bool:
    """A "member" that is the count after the coordination, which the parser
    took for one more conjunct ("with A and B just two parts of a plan":
    "parts" the conjunct of A): no conjunction or comma before it, and a
    count of its own."""
    start = member.left_edge.i
    if start == member.sent.start or member.doc[start - 1].dep_ == "cc" or member.doc[start - 1].is_punct:
        return False
    return any(c.dep_ == "nummod" and c.i < member.i and _counts(c) for c in member.children)


def _absolute_with(first: Token) -> bool:
    """The coordination is the object of "with" opening an absolute phrase
    ("with A and B just two signs of ..."): the count after it, with no
    comma, is its predicate, though the parser hangs it on the verb."""
    return first.dep_ == "pobj" and first.head.lower_ in ("with", "without")


def _counts(word: Token) -> bool:
    if word.lower_ in _PAIR_WORDS:
        return True  # "A and B, the twin pillars of ...", "A and B, a pair of ..."
    return word.lower_ == "both" or word.tag_ == "CD" and _count_of_two_or_more(word)


def _count_of_two_or_more(number: Token) -> bool:
    """A small count of items, two or more ("two", "3"; not "one", a year or an amount)."""
    value = _COUNT_WORDS.get(number.lower_)
    if value is None and number.text.isdigit():
        value = int(number.text)
    return value is not None and 2 <= value < 100


def _title(head: Token) -> bool:
    """The coordination sits in the name of a post or a body: in the
    "of"/"for"/"on" phrase or among the modifiers of a title noun
    ("director of trade and industrial policy", "the culture and sport
    minister"), of a capitalised noun ("the Director of ..."), or of a bare
    singular noun in a post's position ("appointed head of A and B")."""
    for t in [head, *head.ancestors]:
        if t.pos_ in ("VERB", "AUX"):
            return False
        if t.dep_ == "pobj" and t.head.lower_ in _TITLE_PREPOSITIONS:
            noun = t.head.head
            if noun.pos_ not in ("NOUN", "PROPN") and t.head.i > 0:
                noun = t.doc[t.head.i - 1]  # "chaired the committee on A and B": the phrase attached to the verb
        elif t.dep_ in ("compound", "amod", "nmod") and t.head.i > t.i:
            noun = t.head
        else:
            continue
        if noun.pos_ in ("NOUN", "PROPN") and _post(noun):
            return True
    return False


def _post(noun: Token) -> bool:
    if noun.lemma_.lower() in _TITLE_NOUNS or noun.lower_ in _TITLE_NOUNS:
        return True
    if noun.lower_ in _NAME_NOUNS:
        return True  # "a treaty of amity and commerce": a name written lower-case
    if noun.text[:1].isupper() and noun.i > noun.sent.start and noun.pos_ == "NOUN":
        return True  # "the Director of", "the Ministry of"
    bare = noun.tag_ == "NN" and not any(c.dep_ in ("det", "poss", "nummod") for c in noun.children)
    role = noun.dep_ in ("attr", "oprd", "appos") or noun.dep_ == "pobj" and noun.head.lower_ == "as"
    return bare and role
