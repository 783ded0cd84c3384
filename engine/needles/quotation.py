"""Where quoted speech is: the quotation state of a parsed document.

Straight quotation marks cannot be paired by counting in text as datasets
ship it: one article is one line (the "paragraph" is the whole article), and
a single stray mark (an inch sign, an apostrophe the dataset turned into
'"') would put everything after it inside a quotation. So each mark's role
is read from its spacing, as typesetters read it: a mark with a space (or
an opening bracket or dash) before it and none after opens a quotation, one
with a space or punctuation after it and none before closes one; curly
marks say which they are; a mark whose spacing says neither leaves the
state as it was. A stray mark thus changes the state
only until the next clear one, and a paragraph break closes every
quotation. The marks are spaCy's quote tokens (`Token.is_quote`), without
the possessive "'" of "students'" (tag POS; one glued to a word not ending in
"s" is a closing mark the tagger misread: `is_quotation_mark`).

The marks of a document are found once and kept in `doc.user_data`.

`attribution_tail(sent)`: a sentence that only reports who said the
quotation that closed right before it ('"Who decides? Is it the adviser?"
| Walsh said, in an apparent reference to Byrne.'): the segmenter ends a
sentence at a quotation's own "?", "!" or ".", so the attribution stands
alone, and its verb's content is the quotation. It is no sentence of the
writer's own, as '"...," she said.' is not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

OPENING_MARKS = frozenset("\u201c\u2018\u201e\u00ab")
CLOSING_MARKS = frozenset("\u201d\u00bb")
PARAGRAPH = "paragraph"
_MARKS_KEY = "needlejudge_quotation_marks"


DOUBLE_MARKS = frozenset('"\u201c\u201d\u201e\u00ab\u00bb')
_OPEN_BEFORE = frozenset("([{\u2014\u2013")  # what may stand before an opening mark, besides a space
_CLOSE_AFTER = frozenset(".,;:!?)]}\u2014\u2013-'\u2019")  # what may follow a closing mark, besides a space


# verbs that report speech or writing: as the root of a sentence right after a closing mark and with no
# clause of its own ("said, in an apparent reference to X", "told reporters"), they frame that quotation.
# Wider than engine.needles.negation.REPORTING_VERBS (the verbs "not" must not deny), since here any manner
# of saying ("quipped", "warned") attributes the quotation before it
ATTRIBUTION_VERBS = frozenset(
    "say tell ask add write explain note continue insist reply respond answer declare remark argue conclude "
    "warn claim state quip joke recall observe announce admit acknowledge concede complain suggest tweet post "
    "retort counter contend caution predict promise urge wonder exclaim shout scream cry whisper mutter "
    "murmur laugh sigh recount report stress emphasise emphasize assert maintain agree mock".split()
)
_SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass"})
ADDRESSEE_VERBS = frozenset({"tell", "ask"})  # whose object is the one spoken to ("told reporters"), not what was said
_NOT_A_CLAUSE_DEPS = frozenset({"amod", "compound", "aux", "auxpass"})  # a verb's form that heads no clause ("a growing movement")


def is_quotation_mark(token: Token) -> bool:
    """A quote token, but not the possessive apostrophe of "students'". The
    tagger also calls the closing mark of a single-quoted name possessive
    ("the 'Grace' case"): a bare apostrophe is a possessive only after a word
    ending in "s" (English writes "Grace's", never "Grace'"), so one glued to
    any other word closes a quotation (left open, it would hold every later
    sentence of a one-line article)."""
    if not token.is_quote:
        return False
    return token.tag_ != "POS" or _closes_after_word(token)


def _closes_after_word(token: Token) -> bool:
    """A bare apostrophe the tagger read as possessive, glued to a word that
    does not end in "s" ("Grace'"): no possessive, so a closing mark."""
    if token.text not in ("'", "\u2019") or token.i == 0:
        return False
    word = token.doc[token.i - 1]
    return not word.whitespace_ and word.text[-1:].isalpha() and word.text[-1:].lower() != "s"


def mark_role(text: str, at: int) -> str:
    """"open", "close" or "" for the quotation mark at `text[at]`."""
    mark = text[at]
    if mark in OPENING_MARKS:
        return "open"
    if mark in CLOSING_MARKS:
        return "close"
    before = text[at - 1] if at else " "
    after = text[at + 1] if at + 1 < len(text) else " "
    opens = before.isspace() or before in _OPEN_BEFORE
    closes = after.isspace() or after in _CLOSE_AFTER
    if opens and not after.isspace():  # ' "...it was', ' "The'
        return "open"
    if closes and not before.isspace():  # 'it." ', 'Jerusalem"\u2014but'
        return "close"
    return ""


def quotation_marks(doc: Doc) -> tuple[tuple[int, str], ...]:
    """(token index, role) of each quotation mark and paragraph break of
    `doc`, in order (role PARAGRAPH for a break); computed once per Doc. A
    mark is a quote token of spaCy's, or a double mark the tokenizer left
    inside a token ('Jerusalem"\u2014but')."""
    marks = doc.user_data.get(_MARKS_KEY)
    if marks is None:
        text = doc.text
        found: list[tuple[int, str]] = []
        for token in doc:
            if is_quotation_mark(token):
                found.append((token.i, mark_role(text, token.idx)))
            elif "\n" in token.text or "\n" in token.whitespace_:
                found.append((token.i, PARAGRAPH))
            elif not DOUBLE_MARKS.isdisjoint(token.text) or "'" in token.text or "\u2019" in token.text:
                # a mark inside a word is rare: the scan only where there may be one ('Jerusalem"\u2014but', "Grace'-inquiry")
                word = token.text
                found.extend(
                    (token.i, mark_role(text, token.idx + k)) for k, c in enumerate(word) if c in DOUBLE_MARKS or _glued_single_close(word, k)
                )
        marks = doc.user_data[_MARKS_KEY] = tuple(found)
    return marks


def _glued_single_close(word: str, k: int) -> bool:
    """A single mark inside one token that closes a quotation: after a letter
    other than "s" (no possessive, `_closes_after_word`) and before a dash or
    other punctuation ("'Grace'-inquiry"), not before a letter ("don't",
    "O'Brien")."""
    return (
        word[k] in ("'", "\u2019")
        and 0 < k < len(word) - 1
        and word[k - 1].isalpha()
        and word[k - 1].lower() != "s"
        and not word[k + 1].isalnum()
    )


def inside_after(inside: bool, role: str) -> bool:
    """Whether a quotation is open after a mark of `role`, given `inside` before it."""
    return role == "open" or (inside and role == "")


def quotation_open_at(doc: Doc, i: int) -> str:
    """The opening mark of a quotation open where token `i` starts (the
    straight '"' or the curly '\u201c'), or ""."""
    mark = ""
    for k, role in quotation_marks(doc):
        if k >= i:
            break
        if inside_after(bool(mark), role):
            if role == "open":
                mark = '"' if doc[k].text == '"' else "\u201c"
        else:
            mark = ""
    return mark


def quote_open_before(sent: Span) -> str:
    """The mark ('"' or '\u201c') of a quotation opened before `sent` and
    still open where it starts, or "" (the module docstring says how)."""
    return quotation_open_at(sent.doc, sent.start)


def _role_in_doc(doc: Doc, k: int) -> str:
    """mark_role of token k's mark in doc.text, read from the tokens around it:
    mark_role reads one character either side, and Doc.text joins every token anew."""
    around = doc[max(k - 1, 0) : k + 2]
    return mark_role(around.text_with_ws, doc[k].idx - around.start_char)


def attribution_tail(sent: Span) -> bool:
    """Whether `sent` is only the attribution of a quotation that closed right
    before it (module docstring): the token before it is a closing quotation
    mark, and its root is a verb of ATTRIBUTION_VERBS with a subject, no
    object but the one spoken to, and no other verb outside the subject
    ('Walsh told reporters in Dublin.', 'Walsh, who chairs the board, said
    on Friday.' after '"... here?"'; not 'Walsh said Byrne had lost
    control.', 'Walsh answered when asked if ...' nor 'Walsh promised new
    jobs.', which report content of their own, nor 'Walsh left the hall.',
    which reports no speech)."""
    doc = sent.doc
    k = sent.start - 1
    while k >= 0 and doc[k].is_space:
        k -= 1
    if k < 0 or not is_quotation_mark(doc[k]) or _role_in_doc(doc, k) != "close":
        return False
    root = sent.root
    if root.lemma_.lower() not in ATTRIBUTION_VERBS or root.pos_ not in ("VERB", "AUX"):
        return False
    children = list(root.children)
    if not any(c.dep_ in _SUBJECT_DEPS for c in children):
        return False
    if root.lemma_.lower() not in ADDRESSEE_VERBS and any(c.dep_ == "dobj" for c in children):
        return False  # "Walsh promised new jobs": what was said, in the writer's words
    rest = (t for c in children if c.dep_ not in _SUBJECT_DEPS for t in c.subtree)
    return not any(t.pos_ in ("VERB", "AUX") and t.dep_ not in _NOT_A_CLAUSE_DEPS for t in rest)
