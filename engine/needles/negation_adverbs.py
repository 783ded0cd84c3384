"""Where the neg needle's "not" goes among the adverbs around the verb, or
that it has no place there (pure functions of a sentence's parse, for
`engine.needles.negation`).

English puts "not" after the first auxiliary (or the copula), and
do-support ("did not") right before the verb. An adverb in between decides
by its class:

- speaker-oriented and connective adverbs (`SPEAKER_ADVERBS`: "probably",
  "surely", "therefore", "likely") take scope over the negation and stand
  BEFORE "not", wherever they are: "has therefore not been", "will likely
  not sign"; before the auxiliary or the verb they
  stay where they are ("The mayor probably did not sign", "It clearly is
  not"). `PRE_NEGATION_ADVERBS` adds "really" and "actually", which stand
  before an auxiliary or "did not" as well ("It really is not") but after a
  "not" that follows the auxiliary ("has not actually been");
- any other adverb between the subject and the auxiliary, the copula or the
  verb (manner, degree, frequency, time: "very largely is fixed", "strongly
  confirmed", "always has been", "more than tripled") leaves "not" after
  it, where it reads ungrammatically or changes the adverb's scope ("very
  largely is not fixed", "strongly did not confirm"): refused, since moving
  the adverb would change what the sentence claims;
- with do-support, the same holds of an adverbial phrase the parser hung
  off the subject instead of the verb (`adverbial_in_subject`): a
  prepositional phrase or an adverbial noun phrase between the subject's
  head and the verb, not set off by commas, that does not restrict the
  subject ("Congress on a bipartisan basis voted" -> "Congress on a
  bipartisan basis did not vote", U like "strongly did not confirm"), or
  an adverbial clause there, bracketed or not, opened by a subordinator
  ("The council (when Ruiz was its chair) approved"; a relative "when" on
  a noun of time, "The day when the pier opened drew", is the subject's). A phrase
  reads as adverbial when the subject is a name or a personal pronoun (which
  a restrictive phrase does not narrow: "Congress", "he"; "of" stays part
  of a name, "Smith of Ohio"), when its object is a date or a time ("The
  council in May voted"), when its preposition only ever sets a time or a
  circumstance ("during", "after", "despite", ...), or when its object is a
  noun of manner or measure ("on a narrow vote", "by a wide margin", "on a
  bipartisan basis"). A phrase that narrows a common noun ("The members of
  the board voted", "The man in the grey coat bought") and a relative clause
  on the subject ("The council that met on Monday approved") still take
  "did not";
- an adverb after the auxiliary that is not speaker-oriented ("has recently
  been", "will fully recover") follows "not" as English has it ("has not
  recently been").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

# speaker-oriented (epistemic, evaluative) and connective adverbs: they hold of
# the whole negated clause and stand before "not" ("has therefore not been",
# not "has not therefore been" = not for that reason; "will likely not sign")
SPEAKER_ADVERBS = frozenset(
    "therefore nevertheless nonetheless however thus hence accordingly consequently moreover furthermore indeed "
    "certainly probably clearly obviously surely evidently apparently undoubtedly doubtless presumably perhaps "
    "maybe definitely likely admittedly arguably fortunately unfortunately naturally frankly".split()
)
# before an auxiliary, a copula or "did not", and only there: "It really is not", "He actually did not sign"
PRE_NEGATION_ADVERBS = SPEAKER_ADVERBS | frozenset({"really", "actually"})
_ADVERB_DEPS = frozenset({"advmod", "npadvmod", "quantmod"})
# prepositions that set a time or a circumstance, not a restriction on a noun before them
_CIRCUMSTANCE_PREPOSITIONS = frozenset(
    "during after before since until till despite amid amidst throughout following notwithstanding via".split()
)
# nouns of manner or measure: the object of an adverbial phrase ("on a bipartisan basis", "by a wide margin")
_MANNER_NOUNS = frozenset("basis manner way vote margin majority occasion behalf average balance whole".split())
_TIME_ENTITIES = frozenset({"DATE", "TIME"})
# words that open an adverbial clause (a relative clause opens with "who", "which", "that", "where", "whose")
_SUBORDINATORS = frozenset("when while whilst after before as since because although though if unless until once whereas".split())
_CLAUSE_DEPS = frozenset({"relcl", "parataxis", "advcl", "acl"})


def not_after(sent: Span, auxiliary: Token) -> Token:
    """The token after which "not" goes for an auxiliary (or copula): the
    auxiliary itself, or the run of speaker-oriented adverbs right after it
    ("has therefore not been", "will likely not sign")."""
    last = auxiliary
    while last.i + 1 < sent.end and last.nbor().lower_ in SPEAKER_ADVERBS:
        last = last.nbor()
    return last


def adverb_before(sent: Span, subject_end: int, anchor: Token, *, do_support: bool) -> bool:
    """Whether a word between the subject (ending at token `subject_end`) and
    the `anchor` (the first auxiliary, the copula, or the verb that takes
    do-support) leaves "not" in the wrong place: an adverb that is not
    speaker-oriented ("very largely is fixed" -> "very largely is not fixed").
    With do-support every word there counts but those adverbs ("more than
    tripled" -> "more than did not triple"; "probably signed" -> "probably did
    not sign" is English)."""
    for token in sent.doc[subject_end + 1 : anchor.i]:
        if token.is_punct or token.lower_ in PRE_NEGATION_ADVERBS:
            continue
        if do_support or _adverbial(token, anchor):
            return True
    return False


def _adverbial(token: Token, anchor: Token) -> bool:
    """An adverb, or a word of an adverb's phrase ("very" of "very largely",
    "more than" of "more than doubled"), hanging off the clause's verb."""
    node = token
    while node.i != node.head.i and node.head.i != anchor.i and node.head.i != anchor.head.i:
        if node.dep_ in _ADVERB_DEPS or node.pos_ == "ADV":
            return True
        node = node.head
    return node.dep_ in _ADVERB_DEPS or node.pos_ == "ADV"


def adverbial_in_subject(sent: Span, subjects: list[Token], verb: Token) -> bool:
    """Whether one of `subjects` holds, after its head and before the `verb`
    that takes do-support, an adverbial phrase the parser hung off it: a
    prepositional phrase or an adverbial noun phrase, not set off by commas,
    that does not restrict the subject (module docstring)."""
    for subject in subjects:
        for child in subject.children:
            if not subject.i < child.i < verb.i or child.dep_ not in ("prep", "npadvmod", *_CLAUSE_DEPS):
                continue
            if child.i > sent.start and sent.doc[child.left_edge.i - 1].text == ",":
                continue  # set off by commas: "The mayor, in a letter to the council, did not reject"
            if child.dep_ in _CLAUSE_DEPS:
                opening = next((t for t in child.subtree if not t.is_punct), child)
                bracketed = sent.doc[child.left_edge.i - 1].text == "(" or opening.i > child.left_edge.i
                if opening.lower_ in _SUBORDINATORS and (bracketed or child.dep_ != "relcl"):
                    return True  # "Congress (when Ruiz was its chair) voted"; not "The day when the pier opened drew"
                continue
            if child.dep_ == "npadvmod" or _adverbial_phrase(subject, child):
                return True
    return False


def _adverbial_phrase(subject: Token, prep: Token) -> bool:
    objects = [c for c in prep.children if c.dep_ in ("pobj", "pcomp")]
    if prep.lower_ in _CIRCUMSTANCE_PREPOSITIONS:
        return True
    if any(o.ent_type_ in _TIME_ENTITIES for o in objects):
        return True  # the object itself, not a date deeper in it: "data in a survey of refugees during 2016" is the subject's
    if any(o.lemma_.lower() in _MANNER_NOUNS for o in objects):
        return True
    if prep.lower_ == "of" or (prep.ent_type_ and prep.ent_iob_ == "I"):
        return False  # part of a name: "Bank of Ireland", "Smith of Ohio"
    return subject.pos_ == "PROPN" or subject.tag_ == "PRP"
