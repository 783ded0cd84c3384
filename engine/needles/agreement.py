"""Two-model agreement on the parse the neg and con rules edit by.

With two models configured (`model = "en_core_web_sm+en_core_web_md"`,
engine.corpus.nlp.AgreedParser) the first model's parse is the one the rules read
and everything stored comes from. The second model parses the same text in
full anyway (its entities vote in engine.needles.entities); `parse_record` keeps, for
each of its tokens, the character offset, head, dependency label, fine tag
and coarse part of speech, in the Doc's user_data. A neg or con edit is then
made only where both parses say the same about what the edit rests on:

- neg (`verb_agrees`): the root verb (same token, ROOT in both, same fine
  tag, which picks "did"/"does"/"do"), its auxiliaries (the same tokens) and
  that it has a subject;
- con (`coordination_agrees`): the conjunction (a "cc" of the same head in
  both), the conjuncts (the same tokens) and the coordination's own head.

The sentence must also be tokenized alike by both; otherwise nothing is
compared and the rule refuses. Without a second parse (one model, the
paper's setting) every check passes and the rules run as before.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

# doc.user_data key: [offsets, heads, deps, tags, pos] of the second model's tokens (parse_record)
SECOND_MODEL_PARSE = "needlejudge_second_model_parse"
_SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})


def parse_record(doc: Doc) -> list[list[int]]:
    """What the rules compare of `doc`'s parse: columns of token character
    offsets, absolute head indices, dependency-label and tag hashes, and
    coarse part-of-speech ids (plain ints: the record survives Doc.to_bytes)."""
    from spacy.attrs import DEP, HEAD, IDX, POS, TAG

    if not len(doc):
        return [[], [], [], [], []]
    columns = doc.to_array([IDX, HEAD, DEP, TAG, POS]).T
    heads = columns[1].astype("int64") + range(len(doc))  # HEAD is relative (two's complement in uint64)
    return [columns[0].tolist(), heads.tolist(), columns[2].tolist(), columns[3].tolist(), columns[4].tolist()]


class _Aligned:
    """The second parse of one sentence, token k of the sentence = token
    `offset + k` of the second parse."""

    def __init__(self, record: list[list[int]], sent: Span, offset: int) -> None:
        self.offsets, self.heads, self.deps, self.tags, self.pos = record
        self.sent = sent
        self.offset = offset
        self.strings = sent.doc.vocab.strings

    def index(self, token: Token) -> int:
        return self.offset + token.i - self.sent.start

    def dep(self, token: Token) -> str:
        return self.strings[self.deps[self.index(token)]]

    def head(self, token: Token) -> int | None:
        """The doc index of the second parse's head of `token` (None when
        that head lies outside the sentence)."""
        k = self.heads[self.index(token)] - self.offset
        return self.sent.start + k if 0 <= k < len(self.sent) else None

    def children(self, token: Token, deps: frozenset[str]) -> set[int]:
        j = self.index(token)
        return {
            self.sent.start + k - self.offset
            for k in range(self.offset, self.offset + len(self.sent))
            if k != j and self.heads[k] == j and self.strings[self.deps[k]] in deps
        }


def second_parse(sent: Span) -> _Aligned | None | bool:
    """The second model's parse of `sent` (`_Aligned`), True when there is no
    second model (nothing to agree with), False when the two tokenized the
    sentence differently (nothing can be compared: refuse)."""
    record: Any = sent.doc.user_data.get(SECOND_MODEL_PARSE)
    if record is None:
        return True
    offsets = record[0]
    first = sent[0].idx
    at = bisect_left(offsets, first)
    if at + len(sent) > len(offsets):
        return False
    if any(offsets[at + k] != t.idx for k, t in enumerate(sent)):
        return False
    after = at + len(sent)
    if after < len(offsets) and offsets[after] < sent[-1].idx + len(sent[-1]):
        return False  # the second parse splits the last token further
    return _Aligned(record, sent, at)


def verb_agrees(sent: Span, root: Token, auxiliaries: list[Token]) -> bool:
    """Both parses take `root` as the sentence's root with the same fine tag,
    the same auxiliaries and a subject."""
    second = second_parse(sent)
    if second is True:
        return True
    if second is False or second.dep(root) != "ROOT":
        return False
    return _same_finite_verb(second, root, auxiliaries)


def complement_agrees(sent: Span, root: Token, verb: Token, auxiliaries: list[Token]) -> bool:
    """Both parses take `verb` as the clausal complement (ccomp) of the root
    `root`, with the same fine tag, the same auxiliaries and a subject (the
    reported clause engine.needles.negation_reported negates)."""
    second = second_parse(sent)
    if second is True:
        return True
    if second is False or second.dep(root) != "ROOT" or second.dep(verb) != "ccomp" or second.head(verb) != root.i:
        return False
    return _same_finite_verb(second, verb, auxiliaries)


def _same_finite_verb(second: _Aligned, verb: Token, auxiliaries: list[Token]) -> bool:
    """The second parse gives `verb` the same fine tag and part of speech, the
    same auxiliaries and a subject."""
    j = second.index(verb)
    if second.tags[j] != verb.tag or second.pos[j] != verb.pos:
        return False
    if second.children(verb, frozenset({"aux", "auxpass"})) != {a.i for a in auxiliaries}:
        return False
    return bool(second.children(verb, _SUBJECT_DEPS))


def coordination_agrees(sent: Span, conjunction: Token) -> bool:
    """Both parses attach `conjunction` as a "cc" of the same first conjunct,
    with the same further conjuncts, and give the coordination the same head."""
    second = second_parse(sent)
    if second is True:
        return True
    if second is False or second.dep(conjunction) != "cc":
        return False
    first_conjunct = conjunction.head
    if second.head(conjunction) != first_conjunct.i:
        return False
    if second.children(first_conjunct, frozenset({"conj"})) != {c.i for c in first_conjunct.children if c.dep_ == "conj"}:
        return False
    head = first_conjunct.head
    return second.head(first_conjunct) == head.i if head.i != first_conjunct.i else second.dep(first_conjunct) == "ROOT"
