"""Coordinations that enumerate, whose "and" <-> "or" swap has no
or-reading (the con rule's issue-27 session-9 classes), each a pure check of
the parse; called by engine.needles.coordination_sense.

- examples: the coordination is the list after a marker of examples
  ("including", "like", "such as", "for example", "for instance", "e.g.",
  "among them", "notably", ...), of any length: "including A, B and C"
  names some members of a set, and "including A, B or C" names nothing a
  reader can check; the same for the object of the verb "include" ("the
  menu includes fish and chips"). The marker must stand just before the coordination
  (over a comma) and be tied to it by the parse: the first conjunct is the
  marker's object ("including"/"like"/"as"/"for" + pobj), the marker hangs
  on the first conjunct ("e.g." as its adverb, "among them" as its
  modifier, "example" as its compound), or both hang on one noun (the
  parser's "facilities, e.g. cranes and ...": the list as an apposition);
- enumerated complement: a noun coordination is the complement of "are" /
  "were" whose subject is plural ("the reasons are cost and the weather",
  "the winners were a baker and a nurse"): the plural is made of the
  members together, and "or" leaves a plural subject one thing; or that
  is itself the inverted subject of "are"/"were" ("Top among its exports
  are wool, timber and salt": "or salt are" breaks the agreement). After
  "they"/"these"/"those", a list of plural nouns each true of the subject
  is left ("they were farmers and fishermen": "or" reads member by member).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.needles.edits import FINITE_TAGS

if TYPE_CHECKING:
    from spacy.tokens import Token

# markers that open an example phrase of any shape ("ways - for instance, picking up A or B") or an example
# sentence ("For example, ..."), not only a preposition's object; the one list of them (coordination_parts reads it)
EXAMPLE_FRAME_MARKERS = (("for", "example"), ("for", "instance"), ("e.g.",), ("e.g",), ("eg",))
# words that open a list of examples, as lower-case token sequences
EXAMPLE_MARKERS = tuple(
    tuple(m.split())
    for m in (
        "including", "like", "such as", "among them", "among those", "among whom", "among others", "in particular",
        "notably", "especially", "particularly", "chiefly", "mainly", "mostly",
    )
) + EXAMPLE_FRAME_MARKERS  # fmt: skip
# prepositions whose object is the first example ("including A and B", "like A", "such as A", "for example A")
_EXAMPLE_PREPOSITIONS = frozenset({"including", "like", "as", "for"})
# what closes an example phrase inserted in a sentence
_FRAME_ENDS = frozenset({")", ";", ":"})
# dashes as the tokenizer leaves them; a hyphen is a dash only with a space before it (not "click-and-collect")
DASHES = frozenset({"-", "--", "\u2013", "\u2014"})
_PLURAL_PRONOUNS = frozenset({"they", "these", "those"})
_RELATIVE_WORDS = frozenset({"which", "who", "that"})


def list_refusal(token: Token) -> str:
    """Why the swap of the conjunction `token` names no claim because its
    coordination enumerates ("" when it does not)."""
    if _in_example_frame(token):
        return "examples"
    first = _first_conjunct(token.head)
    if first.pos_ in ("VERB", "AUX") and not (first.tag_ == "VBG" and first.dep_ in ("pcomp", "pobj")):
        # clauses name no examples; their subject may ("seven men including X staged ... and lost"); gerunds
        # after a marker do ("functions, including sending A and storing B")
        return ""
    if examples(first) or _second_example_misattached(first) or _list_conjunction_misattached(first):
        return "examples"
    if first.dep_ == "appos" and examples(_first_conjunct(first.head)):
        # a later example the parser made an apposition to an earlier one, the list's own conjunction on it
        # ("including cancer, Alzheimer's and Parkinson's disease, hormone disruption, ... and neurological
        # effects": "disease" apposed to "cancer"; read 5941's replacement needle)
        return "examples"
    if enumerated_complement(first):
        return "enumerated complement"
    return ""


_NOMINAL = frozenset({"NOUN", "PROPN", "PRON", "NUM"})


def _in_example_frame(token: Token) -> bool:
    """The conjunction lies in a verbless example phrase that "for example",
    "for instance" or "e.g." opens inside the sentence ("in other ways -
    for instance, picking up parcels at a depot or from a locker, or
    returning them"): the phrase lists examples, however the parser nests
    them, and "and" and "or" name the same examples. The phrase runs from
    the marker to a dash, bracket, semicolon or colon, or the sentence's
    end, and holds no finite verb (a clause after the marker, "For example,
    the ferry stops at A and B", states a claim)."""
    doc = token.doc
    sent = token.sent
    words = [t.lower_ for t in doc[sent.start : token.i]]
    for marker in EXAMPLE_FRAME_MARKERS:
        for k in range(len(words) - len(marker), 0, -1):
            if tuple(words[k : k + len(marker)]) != marker:
                continue
            if all(t.is_punct for t in doc[sent.start : sent.start + k]):
                break  # sentence-initial: the example is the whole sentence
            start = sent.start + k + len(marker)
            end = next((t.i for t in doc[start : sent.end] if _frame_end(t)), sent.end)
            return start < token.i < end and not any(t.tag_ in FINITE_TAGS for t in doc[start:end])
    return False


def _frame_end(word: Token) -> bool:
    return word.text in _FRAME_ENDS or is_dash(word)


def is_dash(word: Token) -> bool:
    """`word` is a dash between phrases: a dash token, a hyphen only after a space."""
    if word.text == "-":
        return word.i > 0 and bool(word.doc[word.i - 1].whitespace_)
    return word.text in DASHES


def _first_conjunct(head: Token) -> Token:
    """The coordination's first member; a noun the parser made the conjunct
    of a verb ("are, unsurprisingly, A and B": A under "are") is the first
    member itself, not the verb."""
    first = head
    while first.dep_ == "conj" and first.head.i != first.i:
        if first.pos_ in _NOMINAL and first.head.pos_ in ("VERB", "AUX"):
            break
        first = first.head
    return first


def examples(first: Token) -> bool:
    """The coordination whose first conjunct is `first` follows a marker of
    examples and is tied to it by the parse; or is the object of a gerund
    that is the example ("issues like providing A and B"); or is the object
    of the verb "include" ("the menu includes fish and chips": some of the
    members, as after "including"; not a gerund "including", a marker)."""
    gerund = first.head
    if first.dep_ == "dobj" and gerund.lemma_.lower() == "include" and gerund.pos_ == "VERB" and gerund.i < first.i:
        return True
    if first.dep_ == "dobj" and gerund.tag_ == "VBG" and gerund.dep_ in ("pobj", "pcomp") and gerund.i < first.i:
        return examples(gerund)
    marker = _marker_before(first)
    if marker:
        at = {m.i for m in marker}
        preposition = first.head
        if first.dep_ in ("pobj", "pcomp") and preposition.i in at and preposition.lower_ in _EXAMPLE_PREPOSITIONS:
            # "including A", "such as A", "for example A"; not the verb: "voters like A and B"
            return preposition.lower_ != "like" or preposition.tag_ == "IN"
        if any(m.head.i == first.i for m in marker):
            return True  # "e.g." or "among them" or "notably" on the first conjunct, "example" its compound
        if first.dep_ in ("appos", "conj", "npadvmod", "dobj") and any(
            m.head.i == first.head.i != m.i for m in marker
        ):
            return True  # "facilities, e.g. cranes and ...": the marker and the list both on the noun
    # "such cities as A and B": "as" on the noun "such" modifies
    return (
        first.dep_ == "pobj"
        and first.head.lower_ == "as"
        and first.left_edge.i == first.head.i + 1
        and any(c.lower_ == "such" for c in [*first.head.children, *first.head.head.children])
    )


def _second_example_misattached(first: Token) -> bool:
    """A noun coordination deep inside the first example after a marker
    ("including an order instructing the agency to study the impact of
    storms and the report that outlined ..."), whose second member is a
    noun phrase with a determiner or possessive of its own: the parser may
    hang a second example on the last noun of the first, so the pair may be
    the list of examples, which either word names alike. The parse cannot
    tell, so abstain; a bare second member ("an order to repair roads and
    bridges") stays inside the example and is swapped."""
    if first.pos_ not in ("NOUN", "PROPN") or len(first.conjuncts) != 1:
        return False
    second = first.conjuncts[0]
    if second.i < first.i or not any(c.dep_ in ("det", "poss") for c in second.children):
        return False
    for t in first.ancestors:
        if t.pos_ in ("NOUN", "PROPN") and t.dep_ == "pobj" and t.head.lower_ in _EXAMPLE_PREPOSITIONS and _marker_before(t):
            return t.head.lower_ != "like" or t.head.tag_ == "IN"
    return False


def _list_conjunction_misattached(first: Token) -> bool:
    """A coordination inside a list of examples whose own "and"/"or" the
    parser hung elsewhere ("including innovative capabilities, coordination
    capabilities, marketing communication capabilities and corporate social
    responsibilities": "marketing" read as a verb, the list's "and" joining
    its object to the last member): the example after the marker has
    members joined by commas but no conjunction of its own, so the one
    inside it is the list's, and either word names the same examples."""
    for t in first.ancestors:
        if t.pos_ in ("NOUN", "PROPN") and t.dep_ == "pobj" and t.head.lower_ in _EXAMPLE_PREPOSITIONS and _marker_before(t):
            if t.head.lower_ == "like" and t.head.tag_ != "IN":
                return False
            members = [t, *t.conjuncts]
            return len(members) > 1 and not any(c.dep_ == "cc" for m in members for c in m.children)
    return False


def _marker_before(first: Token) -> list[Token]:
    """The tokens of an examples marker that ends just before the first
    conjunct's phrase (over commas), or inside it before the conjunct ("for
    example apples": "example" parsed as the compound of "apples";
    "notably puffins": "notably" its adverb), or []."""
    doc = first.doc
    for end in range(first.left_edge.i, first.i + 1):
        stop = end
        while stop > first.sent.start and doc[stop - 1].text == ",":
            stop -= 1
        for marker in EXAMPLE_MARKERS:
            start = stop - len(marker)
            if start >= first.sent.start and [t.lower_ for t in doc[start:stop]] == list(marker):
                return list(doc[start:stop])
    return []


def enumerated_complement(first: Token) -> bool:
    """The coordination whose first conjunct is `first` is the nominal
    complement of "be" ("are", "were", "will be") with a plural noun subject, or with a plural
    pronoun subject unless every member is a plural noun."""
    if first.dep_ == "appos" and first.head.dep_ == "attr":
        first = first.head  # "are a teacher, a baker and a pilot": the second member as the first's apposition
    if first.pos_ not in _NOMINAL:
        return False
    if first.dep_ in ("attr", "acomp"):
        verb = first.head
    elif first.dep_ == "conj" and first.head.i < first.i:
        verb = first.head  # "are, unsurprisingly, A and B": the parser's A as the conjunct of "are"
    elif first.dep_ == "appos" and first.head.dep_ in ("nsubj", "nsubjpass") and first.head.head.i < first.i:
        verb = first.head.head  # "the causes were, predictably, A and B": A as the subject's apposition
    else:
        return False
    if verb.lemma_.lower() != "be":
        return False  # "are", "were", "will be", "have been": the subject's number decides
    subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
    if not subjects or subjects[0].pos_ == "ADJ":
        # inverted (the parser may make the fronted "Top" the subject): "Top among its exports are A, B and C", "Among the winners were A and B": the list is the
        # plural verb's subject, and "or" breaks the agreement
        return verb.i < first.i and (verb.tag_ == "VBP" and verb.lower_ != "am" or verb.lower_ == "were")
    subject = subjects[0]
    if subject.lower_ in _RELATIVE_WORDS and verb.dep_ == "relcl":
        subject = verb.head  # "the causes, which were A and B"
    if subject.tag_ in ("NNS", "NNPS"):
        return True
    # a pronoun: unless the members are plural nouns each said of it ("they were farmers and fishermen")
    return subject.lower_ in _PLURAL_PRONOUNS and not all(m.tag_ == "NNS" for m in [first, *first.conjuncts])
