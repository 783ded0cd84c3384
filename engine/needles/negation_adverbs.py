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
