"""Coordinations whose members make one whole or one range, or that offer
each member as an option, so that "and" <-> "or" names no claim or the same one (the con rule's
issue-27 session-11 classes), each a pure check of the parse; called by
engine.needles.coordination_sense after its other classes.

- partition: numbered parts of a counted whole ("900 visitors, of whom 500
  came by ferry and 400 by road"): the parts add up to the whole only
  together;
- members of a plural after a dash or colon ("the parcels - Galway, Sligo
  and Tralee"): the plural names every member, at any length, also when
  each member carries its own phrases and the parser joins the second to
  the clause ("send the parcels-Galway by ferry to the agent who asked,
  and Sligo, which lies ..., by road");
- sequence: a verb done to the members one after another ("offered
  successively to A, B and C", "alternately", "consecutively", "in
  succession", "in that order") needs every member;
- span ends: the two ends of one span ("beginning in May and ending in
  June", "the start and the end of the season"), also when the start hangs
  on the first member ("lasted ten years beginning in 1930; and it ending
  in 1940");
- range: a coordination inside a "from ... to ..." range under a word of
  ranging ("everything from nails and screws to sheds") or with both ends
  coordinated: the range's ends are examples, named alike by either
  conjunction (one coordinated end of a journey is left), also deeper
  inside either end or in members the parser hangs beside the range
  ("priced everything from the loss of a cow or a hen to the cost of a
  roof, or how much a field is worth");
- examples: a noun coordination in a sentence that opens "For example," /
  "For instance," names examples, and so do clauses with subjects of their
  own ("For example, A has a port, and B has a mine": two examples; one
  subject's two acts, "the town built a wall and closed the port", stay);
- free choice under a noun: the infinitive of a noun of ability or
  permission ("the power to search, detain or question", "the right to
  speak or write") or of a counted span of time ("given 28 days to appeal
  or reapply"), whose "or" offers each option as "can" does, at any
  length.

Degree adverbs coordinated on one word ("very or somewhat likely") are
engine.needles.coordination_scope's "degrees".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.needles.coordination_lists import DASHES, EXAMPLE_FRAME_MARKERS
from engine.needles.edits import SUBJECT_DEPS

if TYPE_CHECKING:
    from spacy.tokens import Token

# the pronoun of a partitive relative or phrase: "of whom 500 ...", "of which 12 ..."
_PARTITIVE_PRONOUNS = frozenset({"whom", "which", "them", "these", "those"})
_SEQUENCE_WORDS = (("successively",), ("alternately",), ("consecutively",), ("in", "succession"), ("in", "that", "order"),
                   ("in", "sequence"), ("one", "after", "another"), ("one", "after", "the", "other"))  # fmt: skip
_SPAN_STARTS = frozenset("begin start commence open beginning start opening outset".split())
_SPAN_ENDS = frozenset("end finish conclude close terminate expire ending finish closing conclusion".split())
# how the parser hangs a span's start on the verb it describes ("lasted ten years beginning in 1930")
_SPAN_START_DEPS = frozenset({"advcl", "xcomp", "prep", "acl", "npadvmod"})
_DASHES_OR_COLON = DASHES | {":"}
_PLURAL_TAGS = ("NNS", "NNPS")
# nouns of ability and permission: their infinitive offers each option ("the right to speak or write")
# ... and nouns of the means to act, whose infinitive states a capacity ("the tools to prevent war or to fight",
# as "sufficient boats to reach A and B", session 18; read of part 3 at 6e7a150)
_FREE_CHOICE_NOUNS = frozenset(
    "power right authority freedom licence license permission ability option chance opportunity capacity liberty "
    "privilege entitlement tool means resource wherewithal".split()
)
# a span of time given for an infinitive offers each option as a permission does ("28 days to appeal or reapply")
_TIME_SPAN_NOUNS = frozenset("minute hour day week month year".split())
# what a "from ... to ..." range hangs on, when the parser reads its "to" as an infinitive's ("from A to garden sheds")
_NOMINAL = frozenset({"NOUN", "PROPN", "PRON", "NUM"})
_RANGE_WORDS = frozenset("range vary span stretch everything anything something all".split())


def parts_refusal(token: Token) -> str:
    """Why the swap of the conjunction `token` names no claim because its
    members make one whole or range, or offer each as an option ("" when none holds)."""
    first = token.head
    while first.dep_ == "conj" and first.head.i != first.i:
        first = first.head
    members = [first, *first.conjuncts]
    if _partition(token, first):
        return "partition"
    if _dashed_members(first) or _member_far_after_a_dash(token, first) or _members_conjunction_misattached(first):
        return "members of a plural"
    if _sequence(first):
        return "sequence"
    if _span_ends(members):
        return "span ends"
    if _range(token, first):
        return "range"
    if (first.pos_ in _NOMINAL or _own_subjects(token, first)) and _example_sentence(token):
        return "examples"
    if _free_choice_noun(first):
        return "free choice"
    return ""


def _clause(word: Token) -> Token:
    """The verb of `word`'s clause (`word` itself when it is one)."""
    while word.pos_ not in ("VERB", "AUX") and word.head.i != word.i:
        word = word.head
    return word


def _partition(token: Token, first: Token) -> bool:
    """The coordination's clause is a partitive ("of whom", "of which") and
    holds a number on each side of the conjunction: counted parts of a
    whole ("of whom 1,200 were treated at home and 1,800 in the wards")."""
    verb = _clause(first)
    partitive = any(
        c.dep_ == "prep" and c.lower_ == "of" and any(p.dep_ == "pobj" and p.lower_ in _PARTITIVE_PRONOUNS for p in c.children)
        for c in verb.children
    )
    if not partitive:
        return False
    span = verb.doc[verb.left_edge.i : verb.right_edge.i + 1]
    numbers = [t.i for t in span if t.like_num and t.tag_ == "CD"]
    return any(i < token.i for i in numbers) and any(i > token.i for i in numbers)


def _dashed_members(first: Token) -> bool:
    """The coordination is an apposition to a plural noun after a dash or a
    colon ("the parcels - Galway, Sligo and Tralee"), of any length; the
    parser may hang it on another noun when the plural ends the phrase
    just before the dash ("called at the ports: A, B and C"), or not read
    it as an apposition at all when a dash, or a hyphen standing for one,
    joins it straight to the plural ("handed over the forts-A and B",
    "the forts - A and B": the parser's compound, second object or a list
    whose first member is the plural). A noun coordination there restates
    the plural whatever its label, unless it is a subject (a clause of its
    own after the dash)."""
    if not first.conjuncts:
        return False
    doc, head = first.doc, first.head
    if first.dep_ == "appos" and head.tag_ in _PLURAL_TAGS and head.i < first.i and any(
        t.text in _DASHES_OR_COLON for t in doc[head.i + 1 : first.left_edge.i]
    ):
        return True
    second = first.conjuncts[0]
    if first.tag_ in _PLURAL_TAGS and first.i + 2 == second.left_edge.i and doc[first.i + 1].text in _DASHES_OR_COLON:
        return True  # the parser's list over the dash: "the islands-A and B" with A as the plural's conjunct
    start = first.left_edge.i
    if first.dep_ != "appos":
        # the parser's compound over a hyphen ("the forts-A and B"): the members start after the dash
        start = max((t.i + 1 for t in doc[start : first.i] if t.text in DASHES), default=start)
    if start - 2 < first.sent.start or doc[start - 1].text not in _DASHES_OR_COLON:
        return False
    plural = doc[start - 2]
    if first.dep_ == "appos":
        return plural.tag_ in _PLURAL_TAGS
    # a whole noun phrase before the dash ("the forts", "its ports", "two ports"; not "arms-length sales")
    return _whole_plural(plural) and first.pos_ in ("NOUN", "PROPN") and first.dep_ not in SUBJECT_DEPS


def _members_conjunction_misattached(first: Token) -> bool:
    """A coordination inside a plural's members spelt out after a dash or a
    colon, whose own "and"/"or" the parser hung inside the last member
    ("the challenges: a demanding boss, an administration staffed with
    newcomers and colleagues all vying for power": "colleagues" read as a
    second object of "with"): the members, read as appositions, have no
    conjunction of their own, so the one inside them is theirs, and "or"
    leaves the plural one member (`_dashed_members`)."""
    doc = first.doc
    for member in first.ancestors:
        if member.dep_ != "appos" or member.head.tag_ not in _PLURAL_TAGS or member.head.i > member.i:
            continue
        if not any(t.text in _DASHES_OR_COLON for t in doc[member.head.i + 1 : member.left_edge.i]):
            return False
        chain = [member]  # the members, each the apposition (or conjunct) of the one before
        while (after := next((c for c in chain[-1].children if c.dep_ in ("appos", "conj") and c.i > chain[-1].i), None)) is not None:
            chain.append(after)
        inside_last = chain[-1].left_edge.i <= first.i <= chain[-1].right_edge.i and first not in chain
        return len(chain) > 1 and inside_last and not any(c.dep_ == "cc" for m in chain for c in m.children)
    return False


def _whole_plural(noun: Token) -> bool:
    """`noun` is a plural heading a whole noun phrase ("the forts", "its ports", "two ports"), not a plural
    modifier run into a hyphen ("arms-length sales")."""
    return noun.tag_ in _PLURAL_TAGS and any(c.dep_ in ("det", "poss", "nummod") for c in noun.children)


def _member_far_after_a_dash(token: Token, first: Token) -> bool:
    """The conjunction joins a noun to the first member of a plural spelt
    out after a dash, or a hyphen standing for one, with phrases of the
    first member between them ("to sell the farms-Glenmore without delay to
    the first buyer who asks, and Ardnacrusha, which lies by the river, at
    the fair"): the parser hangs the second member on the clause, so the
    coordination is at or above the plural, not beside the first member.
    "or" leaves the plural one member, as in the adjacent case
    (`_dashed_members`). Not when a second dash closes the aside before
    the conjunction ("the crews - both of them - and the harbour master")."""
    second = next((c for c in first.conjuncts if c.i > token.i), None)
    if second is None or second.pos_ not in ("NOUN", "PROPN"):
        return False
    doc = token.doc
    for dash in doc[token.sent.start + 1 : token.i]:
        plural = doc[dash.i - 1]
        if dash.text not in DASHES or not _whole_plural(plural):
            continue
        member = doc[dash.i + 1]
        while member.dep_ in ("det", "amod", "compound", "nummod", "poss") and member.head.i > member.i:
            member = member.head
        if member.pos_ not in ("NOUN", "PROPN") or member.dep_ in SUBJECT_DEPS or member.i >= token.i:
            continue  # a clause of its own after the dash
        if any(t.text in DASHES for t in doc[member.i + 1 : token.i]):
            continue
        if first.i == member.i or first.i == plural.i or first in plural.ancestors:
            return True
    return False


def _sequence(first: Token) -> bool:
    """A verb above the coordination, in its own clause, carries an adverb of
    sequence ("offered successively to A, B and C")."""
    verb = _clause(first)
    words = [t.lower_ for t in verb.doc[verb.left_edge.i : verb.right_edge.i + 1]]
    return any(words[k : k + len(p)] == list(p) for p in _SEQUENCE_WORDS for k in range(len(words)))


def _span_ends(members: list[Token]) -> bool:
    """Two members, one the start and one the end of one span ("beginning
    in May and ending in June", "the start and the end of the season"), or
    the end and a first member that carries the start ("lasted ten years
    beginning in 1930, and ending in 1940")."""
    if len(members) != 2:
        return False
    first, second = members
    if second.lemma_.lower() not in _SPAN_ENDS:
        return False
    starts = [*_with_verb_above(first), *(c for c in first.children if c.i < second.i and c.dep_ in _SPAN_START_DEPS)]
    return any(s.lemma_.lower() in _SPAN_STARTS or s.lower_ in _SPAN_STARTS for s in starts)


def _with_verb_above(member: Token) -> list[Token]:
    """`member`, and the verb it hangs on through "by"/"with" + gerund
    ("started by congratulating him and finished by ...": the parser
    coordinates "finished" with the gerund, not with "started")."""
    words = [member]
    if member.dep_ == "pcomp" and member.head.dep_ == "prep" and member.head.head.pos_ == "VERB":
        words.append(member.head.head)
    return words


def _range(token: Token, first: Token) -> bool:
    """The coordination is one end of a "from ... to ..." range: under a word
    of ranging ("everything from nails and screws to sheds", "ranged from
    dinghies to trawlers and ferries"), or with both ends coordinated ("from
    A and B to C and D"). One origin or destination coordinated is a
    journey ("came from A and B to the fair", "sailed from X to A, B and
    C") and stays."""
    doc = token.doc
    if _under_held_range(token):
        return True
    if first.dep_ != "pobj":
        return False
    preposition = first.head
    last = max(m.right_edge.i for m in [first, *first.conjuncts])
    if preposition.lower_ == "from":
        after = last + 1
        if after + 1 >= len(doc) or doc[after].lower_ != "to":
            return False
        # "borrowing money from A and B to buy it" is a purpose; only a range's head takes the infinitive reading
        both = doc[after + 1].tag_ != "VB" and any(c.dep_ == "pobj" and c.conjuncts for c in doc[after].children)
        return both or _range_holder(preposition)
    if preposition.lower_ == "to" and preposition.i > first.sent.start:
        before = doc[preposition.i - 1]
        # the "from" whose object ends just before "to" (the parser hangs "to" on the "from" or beside it)
        source = next((a for a in before.ancestors if a.lower_ == "from"), None)
        objects = [c for c in source.children if c.dep_ == "pobj"] if source is not None else []
        if not objects or objects[0].right_edge.i != before.i:
            return False
        return _range_holder(source) or bool(objects[0].conjuncts)
    return False


def _under_held_range(token: Token) -> bool:
    """A word above the conjunction holds a "from ... to ..." range on a word
    of ranging ("pricing everything from A to B"), and the conjunction comes
    after the range's "from": a member of either end, at any depth, or a
    further example the parser hung on the same word."""
    for word in [token.head, *token.head.ancestors]:
        sources = [c for c in word.children if c.dep_ == "prep" and c.lower_ == "from" and c.i < token.i]
        for source in sources:
            ends = [c for c in word.children if c.dep_ == "prep" and c.lower_ == "to" and c.i > source.i]
            if ends and _range_holder(source):
                return True
    return False


def _range_holder(source: Token) -> bool:
    """The "from" hangs on a word of ranging ("ranged", "varies") or follows
    "everything", "anything", ..."""
    holders = (source.head, source.doc[source.i - 1])
    return any(h.lemma_.lower() in _RANGE_WORDS or h.lower_ in _RANGE_WORDS for h in holders)


def _own_subjects(token: Token, first: Token) -> bool:
    """Clauses joined at `token`, the one after it with a subject of its own."""
    if first.pos_ not in ("VERB", "AUX"):
        return False
    later = [c for c in first.conjuncts if c.i > token.i]
    return bool(later) and any(c.dep_ in ("nsubj", "nsubjpass", "expl") for c in later[0].children)


def _example_sentence(token: Token) -> bool:
    """The sentence opens "For example," / "For instance," / "e.g.,"."""
    words = [t.lower_ for t in token.sent if not t.is_punct or t.text == "e.g."][:2]
    return any(words[: len(p)] == list(p) for p in EXAMPLE_FRAME_MARKERS)


def _free_choice_noun(first: Token) -> bool:
    """The coordination is the infinitive of a noun of ability or permission
    ("the power to search, detain or question"), or lies under that
    infinitive without another noun in between ("the right to sell tickets
    and programmes"), at any length. Verbs as members must all be bare
    infinitives: a finite one is a clause of its own that the parser hung
    there ("gives them the right to quit and outlines the procedure")."""
    members = [first, *first.conjuncts]
    if any(m.pos_ in ("VERB", "AUX") for m in members) and not all(m.tag_ == "VB" or _mistagged_infinitive(m, first) for m in members):
        return False
    if first.tag_ == "VB" and first.dep_ == "advcl" and _to_after_free_choice_noun(first):
        return True  # the parser hangs "the freedom to travel and work" on the verb: the infinitive is the noun's
    for t in [first, *first.ancestors]:
        if t.pos_ in ("NOUN", "PROPN") and t.i != first.i:
            return False  # another noun in between: "the right to a share of A and B" is no option
        if t.pos_ in ("VERB", "AUX") and t.dep_ not in ("xcomp", "conj"):
            infinitive = t.dep_ in ("acl", "relcl") and any(c.lower_ == "to" and c.i < t.i for c in t.children)
            return infinitive and _offers_choice(t.head)
    return False


def _offers_choice(noun: Token) -> bool:
    """A noun of ability or permission, or a counted span of time ("28
    days"), whose infinitive offers each option."""
    lemma = noun.lemma_.lower()
    return lemma in _FREE_CHOICE_NOUNS or lemma in _TIME_SPAN_NOUNS and any(c.dep_ == "nummod" for c in noun.children)


def _mistagged_infinitive(member: Token, first: Token) -> bool:
    """A later member the tagger read as a noun or adjective after the bare
    infinitive `first` ("the right to organise and protest", "a chance to
    swim and sail", "the right to organise and self-express"): nothing of its
    own before it (no determiner, possessive or number), so it continues the
    infinitive; a finite verb ("... and outlines the procedure") is a clause."""
    if first.tag_ != "VB" or member.i == first.i or member.tag_ not in ("NN", "JJ"):
        return False
    return not any(c.dep_ in ("det", "poss", "nummod", "amod") for c in member.children)


def _to_after_free_choice_noun(verb: Token) -> bool:
    """`verb`'s "to" follows a noun of ability or permission or a counted
    span of time straight on ("won the freedom to travel", "was given 28
    days to appeal"): the infinitive completes that noun."""
    to = verb.doc[verb.left_edge.i]
    if to.lower_ != "to" or to.i == verb.sent.start:
        return False
    noun = verb.doc[to.i - 1]
    return noun.pos_ == "NOUN" and _offers_choice(noun)
