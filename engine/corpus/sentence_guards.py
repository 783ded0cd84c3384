"""Sentence boundaries the parser must respect: set on the tokens before it runs.

spaCy's parser splits sentences where its model guesses, and it honours
boundaries set on `Token.is_sent_start` before it runs (True: a sentence
starts here; False: one cannot). `sentence_guards`, a pipeline component
placed before the parser (engine.corpus.nlp.load_nlp), sets them where
the text shows what the model misses:

- no sentence starts inside a pair of brackets closed within the paragraph
  ("(lit." | '"little house")');
- none after a title, an initial or a lowercase abbreviation ("Brig." |
  "Gen. John Smith", "Donald J." | "Trump", "c." | "1500"), unless a
  non-title is followed by a word that opens sentences ("... moved to the
  U.S. The rest"); the abbreviations missing from spaCy's own tokenizer
  exceptions are added as tokenizer special cases (`add_abbreviations`), so
  "Brig." is one token as "Gen." already is;
- none after a "?" written against a number ("over ?2bn": a currency sign a
  dataset lost to mojibake);
- one does start where a heading was fused onto the next sentence in text
  shipped without line breaks ("Trouble on the Peninsula The move is ..."):
  a capitalised word that opens sentences ("The", "In", "But"; spaCy's
  `is_stop`) after a word with no punctuation between, followed by a
  lowercase word, where the words since the last sentence end read as a
  heading: a few words without a comma, or up to 20 without a finite verb
  (the tagger's VBD/VBZ/VBP/MD: the tagger runs before the parser). So the
  capitalised "Him" of an old address ("... and I invite you to join me in
  offering to Him fervent thanks") starts nothing.
  The heading is then a "sentence" of its own, without a sentence end, and
  engine.corpus.sentence_gate drops it.
"""

from __future__ import annotations

from spacy.language import Language
from spacy.tokens import Doc, Token

from engine.corpus.cleaning import ABBREVIATIONS, TITLES

PARSER_GUARDS = "needlejudge_sentence_guards"

MAX_BRACKET_TOKENS = 80  # a bracket left open longer than this is a stray, not a parenthesis
MAX_HEADING_TOKENS = 20
SHORT_HEADING_TOKENS = 8
_BRACKETS = {"(": ")", "[": "]"}
_FINITE_TAGS = frozenset({"VBD", "VBZ", "VBP", "MD"})
_SENTENCE_ENDS = frozenset(".!?:")  # where a heading may start (not ";": that is mid-sentence)


def add_abbreviations(nlp: Language) -> None:
    """Tokenizer special cases: each title and abbreviation with its period is one token."""
    for word in TITLES | ABBREVIATIONS:
        for form in {word, word.capitalize()}:
            nlp.tokenizer.add_special_case(f"{form}.", [{"ORTH": f"{form}."}])


def _opens_sentences(token: Token) -> bool:
    # a capitalised function word, not a name the tagger sees ("16 May convinced": a month)
    return token.is_title and token.is_stop and token.text != "I" and token.tag_ not in ("NNP", "NNPS")


def _new_line(token: Token) -> bool:
    return "\n" in token.text or "\n" in token.whitespace_


def _heading_before(doc: Doc, i: int) -> bool:
    """Whether the words since the last sentence end before token i read as
    a heading: at most SHORT_HEADING_TOKENS without a comma ("Harbour works
    stall"), or at most MAX_HEADING_TOKENS without a finite verb."""
    k = i - 1
    finite = comma = False
    while k >= 0 and i - k <= MAX_HEADING_TOKENS + 1:
        token = doc[k]
        if token.text in _SENTENCE_ENDS or _new_line(token):
            break
        finite = finite or token.tag_ in _FINITE_TAGS
        comma = comma or token.text == ","
        k -= 1
    else:
        if k >= 0:
            return False  # longer than any heading
    words = i - k - 1
    return words > 0 and (not finite or (words <= SHORT_HEADING_TOKENS and not comma))


def _forbid(token: Token) -> None:
    if token.is_sent_start is None:
        token.is_sent_start = False


def _bracket_guards(doc: Doc) -> None:
    open_at: list[int] = []
    for token in doc:
        if _new_line(token):
            open_at.clear()
        elif token.text in _BRACKETS:
            open_at.append(token.i)
        elif token.text in (")", "]") and open_at:
            start = open_at.pop()
            if token.i - start <= MAX_BRACKET_TOKENS:
                for k in range(start + 1, token.i + 1):
                    _forbid(doc[k])


def _abbreviation(token: Token) -> str | None:
    """"title", "other" (an initial or a lowercase abbreviation) or None."""
    text = token.text
    if len(text) < 2 or not text.endswith("."):
        return None
    word = text[:-1]
    if word in TITLES:
        return "title"
    if (len(word) == 1 and word.isupper()) or word.lower() in ABBREVIATIONS:
        return "other"
    return None


def _fused_heading(doc: Doc, i: int) -> bool:
    """Whether token i starts a sentence fused onto a heading before it."""
    if i < 2 or i + 1 >= len(doc):
        return False
    before, token, after = doc[i - 1], doc[i], doc[i + 1]
    # (a whole word: "Cant" is tokenized "Ca" + "nt", as "can't")
    if not before.whitespace_ or not token.whitespace_ or not _opens_sentences(token) or not after.is_lower:
        return False
    wordlike = before.is_alpha or before.like_num
    closing = (before.is_quote or before.is_right_punct) and doc[i - 2].text[-1:] not in ".!?"
    return (wordlike or closing) and _heading_before(doc, i)


@Language.component(PARSER_GUARDS)
def sentence_guards(doc: Doc) -> Doc:
    """Set the sentence starts the parser must respect (module docstring)."""
    _bracket_guards(doc)
    for token in doc[:-1]:
        following = doc[token.i + 1]
        kind = _abbreviation(token)
        if kind == "title" or (kind == "other" and not _opens_sentences(following)):
            _forbid(following)
        elif token.text == "?" and not token.whitespace_ and following.like_num:
            _forbid(following)
        elif following.is_sent_start is None and _fused_heading(doc, token.i + 1):
            following.is_sent_start = True
    return doc
