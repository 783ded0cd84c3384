"""Sentence boundaries the parser must respect: set on the tokens before it runs.

spaCy's parser splits sentences where its model guesses, and it honours
boundaries set on `Token.is_sent_start` before it runs (True: a sentence
starts here; False: one cannot). `sentence_guards`, a pipeline component
placed before the parser (engine.corpus.nlp.load_nlp), sets them where
the text shows what the model misses:

- no sentence starts inside a pair of brackets closed within the paragraph
  ("(lit." | '"little house")'), nor inside a double quotation closed
  within the line that holds no mark that may end a sentence (a quoted
  phrase: 'urged them to "Help the harbour: don't buy | Imported Fish",
  says ...'; `_quotation_guards`);
- none after a title, an initial or a lowercase abbreviation ("Brig." |
  "Gen. John Smith", "Donald J." | "Trump", "c." | "1500"), unless a
  non-title is followed by a word that opens sentences ("... moved to the
  U.S. The rest"); the abbreviations missing from spaCy's own tokenizer
  exceptions are added as tokenizer special cases (`add_abbreviations`), so
  "Brig." is one token as "Gen." already is;
- none after "a.m." or "p.m." written after a number before a day name,
  nor where the words before it hold no finite verb ("Just after 11 p.m. |
  Friday, the crew ..."): the head would be dropped as a fragment and the
  tail stored without it (`_time_goes_on`);
- none after a name's suffix ("Jr.") before a lowercase word or a verb
  ("Thomas Walsh Jr. | said ...", "... Jr. | who ran ..."); before a
  capitalised word one may ("... named for Thomas Walsh Jr. | The board");
- one does start after a unit letter's period written against a number,
  before a word that opens sentences ("spent ?490m. | The minister said"):
  the tokenizer keeps "m." as one abbreviation token, so the parser sees no
  period there;
- none before a lowercase word after "!", "?", an ellipsis (also a spaced
  one, ". . .", inside which none starts either) or an abbreviation ("the
  band Neu! | having split", "Centre a.s. | in 2009"), also where a
  quotation mark closes between them (a quoted title: 'its "Stop Now!" |
  campaign'), and before a name and a verb of saying after a quotation
  closed by "!" or "?" (its attribution: '"Is it?" | Ann Walsh asked.');
- none after a "?" written against a number ("over ?2bn": a currency sign a
  dataset lost to mojibake), nor after one glued to a word of one to three
  capitals when the clause plainly goes on ("told RT? News they had ...",
  "the L? Eithne does not ...": a lost accented capital, RTÉ, LÉ):
  a capitalised word that is not a function word, then a lowercase word
  that does not start a noun phrase (not a noun, an adjective or a gerund:
  "the FCC? Republican lawmakers proposed" is a new sentence), or a colon
  or a comma ("told RT? News: ...", "contacted by RT? News, the ..."), and the
  words before do not open as a question does (an auxiliary, a modal or a
  wh-word first: "Did you ask the BBC? Trump said no." splits; a wh-word
  before a participle opens a subordinate clause: "When contacted by");
- none after a lowercase function word written with a hyphen or dash
  against its end ("has supported him, while- Tom Byrne ... resigned",
  "declared that- The length of time ..."): no sentence ends on it;
- one does start where a heading was fused onto the next sentence in text
  shipped without line breaks ("Trouble on the Peninsula The move is ...",
  "Ferry firm cuts sailings Harbour Lines will cut its sailings ..."):
  engine.corpus.fused_headings says where, from the tagger's output (the
  tagger runs before the parser), and abstains when the words before do not
  read as a heading ("... to join me in offering to Him fervent thanks").
  So does one after an all-capitals section heading ("PUBLIC WORKS The
  board ...", fused_headings.caps_heading_starts), which would otherwise
  be dropped with the sentence under it, and after a name set as a heading
  over the sentence that opens with it (name_heading_starts). The heading is then a "sentence"
  of its own, without a sentence end, and engine.corpus.sentence_gate drops it.
"""

from __future__ import annotations

import calendar

from spacy.lang.en.stop_words import STOP_WORDS
from spacy.language import Language
from spacy.tokens import Doc, Token

from engine.corpus.cleaning import ABBREVIATIONS, NAME_SUFFIXES, TITLES
from engine.corpus.fused_headings import (
    MAX_NAME_WORDS,
    fused_heading,
    heading_starts,
    name_word,
    new_line,
    opens_sentences,
)
from engine.needles.edits import FINITE_TAGS

PARSER_GUARDS = "needlejudge_sentence_guards"

MAX_BRACKET_TOKENS = 80  # a bracket left open longer than this is a stray, not a parenthesis
_BRACKETS = {"(": ")", "[": "]"}
# marks after which a lowercase word goes on the sentence; not ".", which
# also ends a sentence before a lowercase credit line ("... Qatar. bea/hg (Reuters)")
_ENDS = frozenset({"!", "?", "...", "\u2026"})
# verbs of saying after a quotation's name ('"Is it?" Ann Walsh asked.')
SAYING_FORMS = frozenset(
    {"said", "says", "asked", "asks", "added", "adds", "told", "tells", "wrote", "writes",
     "explained", "explains", "replied", "replies", "tweeted", "tweets"}
)  # fmt: skip


def add_abbreviations(nlp: Language) -> None:
    """Tokenizer special cases: each title and abbreviation with its period is one token."""
    for word in TITLES | ABBREVIATIONS | NAME_SUFFIXES:
        for form in {word, word.capitalize()}:
            nlp.tokenizer.add_special_case(f"{form}.", [{"ORTH": f"{form}."}])


def _forbid(token: Token) -> None:
    if token.is_sent_start is None:
        token.is_sent_start = False


def _bracket_guards(doc: Doc) -> None:
    open_at: list[int] = []
    for token in doc:
        if new_line(token):
            open_at.clear()
        elif token.text in _BRACKETS:
            open_at.append(token.i)
        elif token.text in (")", "]") and open_at:
            start = open_at.pop()
            if token.i - start <= MAX_BRACKET_TOKENS:
                for k in range(start + 1, token.i + 1):
                    _forbid(doc[k])


MAX_QUOTATION_TOKENS = 40  # a quoted phrase inside a sentence, not a quoted passage
_OPENING_QUOTES = frozenset({'"', "\u201c"})
_CLOSING_QUOTES = frozenset({'"', "\u201d"})
_QUOTATION_ENDS = frozenset(".!?;\u2026")  # a mark that may end a sentence inside the quotation


def _quotation_guards(doc: Doc) -> None:
    """No sentence starts inside a double quotation that holds no sentence
    end ('... urged them to "Help the harbour: don't buy Imported Fish",
    says ...'): a quoted phrase of the sentence around it. A mark opens
    only after a space or a line start and before a word; the next double
    mark must close (after a word, before a space or punctuation), within
    the line and MAX_QUOTATION_TOKENS, else nothing is set (a stray mark or
    a dataset's mojibake for an apostrophe, 'didn"t', abstains)."""
    for token in doc:
        if token.text not in _OPENING_QUOTES or token.i + 1 >= len(doc):
            continue
        before = doc[token.i - 1] if token.i > 0 else None
        if (before is not None and not (before.whitespace_ or new_line(before))) or token.whitespace_:
            continue
        close = None
        for k in range(token.i + 1, min(len(doc), token.i + MAX_QUOTATION_TOKENS + 2)):
            inner = doc[k]
            if inner.text in _OPENING_QUOTES | _CLOSING_QUOTES or "\"" in inner.text or new_line(inner):
                close = k if inner.text in _CLOSING_QUOTES and not doc[k - 1].whitespace_ else None
                break
        if close is None or close == token.i + 1:
            continue
        closing = doc[close]
        if close + 1 < len(doc) and not (closing.whitespace_ or doc[close + 1].is_punct):
            continue  # not a closing mark: 'didn"t'
        if any(t.text[-1:] in _QUOTATION_ENDS for t in doc[token.i + 1 : close]):
            continue  # a quoted sentence may end inside: '"We sail. We dock," she said.'
        for k in range(token.i + 1, close + 1):
            _forbid(doc[k])


def _unit_after_number(token: Token) -> bool:
    """A unit letter and its period written against a number ("490m.",
    "5k."): the tokenizer's single-letter abbreviation, which ends the
    sentence when a word that opens sentences follows."""
    doc = token.doc
    text = token.text
    return (
        len(text) == 2 and text[0].islower() and text[1] == "." and token.i > 0
        and doc[token.i - 1].like_num and not doc[token.i - 1].whitespace_
    )  # fmt: skip


def _dotted(token: Token) -> bool:
    """An abbreviation with inner periods ("a.s.", "i.e.")."""
    return len(token.text) > 2 and token.text.endswith(".") and "." in token.text[:-1]


# what the word after a capitalised one is when the two open a noun phrase ("Republican lawmakers", "Key sticking points")
_NOUN_PHRASE_TAGS = frozenset({"NN", "NNS", "JJ", "JJR", "JJS", "VBG"})
_QUESTION_OPENING_TAGS = frozenset({"MD", "WRB", "WP", "WP$", "WDT"})
_AUXILIARIES = frozenset(
    {"do", "does", "did", "is", "are", "was", "were", "am", "has", "have", "had",
     "can", "could", "will", "would", "shall", "should", "may", "might", "must"}
)  # fmt: skip
MAX_LOST_LETTER_WORD = 3  # "RT?" (RTÉ), "L?" (LÉ): an acronym that lost its last, accented letter


def _clause_start(doc: Doc, i: int) -> Token:
    """The first word after the last sentence end (or line break) before token i."""
    k = i
    while k > 0 and not (doc[k - 1].text in (".", "!", "?", ":") or new_line(doc[k - 1])):
        k -= 1
    while k < i and not doc[k].is_alpha:
        k += 1  # past an opening quotation mark or bracket
    return doc[k]


def _lost_letter_goes_on(token: Token) -> bool:
    """"?" glued to a word of one to three capitals, in a clause that goes on
    after it: the "?" is a lost accented letter, not a question's end (module
    docstring)."""
    doc = token.doc
    i = token.i
    if token.text != "?" or i == 0 or i + 2 >= len(doc) or not token.whitespace_:
        return False
    word, following, after = doc[i - 1], doc[i + 1], doc[i + 2]
    if word.whitespace_ or not (word.is_alpha and word.is_upper and len(word.text) <= MAX_LOST_LETTER_WORD):
        return False
    if not (following.is_title and following.is_alpha) or opens_sentences(following):
        return False
    # the name's own punctuation ("told RT? News: ...", "When contacted by RT? News, the board ...") or a clause going on
    own_punctuation = after.text in (":", ",") and not following.whitespace_
    goes_on = following.whitespace_ and after.is_lower and after.is_alpha and after.tag_ not in _NOUN_PHRASE_TAGS
    if not (own_punctuation or goes_on):
        return False
    start = _clause_start(doc, i - 1)
    return not (_opens_question(start) or start.lower_ in _AUXILIARIES)


def _opens_question(start: Token) -> bool:
    """A modal or a wh-word first, unless a participle follows it: "When
    contacted by ...", "While speaking to ..." open a subordinate clause,
    which no question does."""
    if start.tag_ not in _QUESTION_OPENING_TAGS:
        return False
    following = start.doc[start.i + 1] if start.i + 1 < len(start.doc) else None
    return not (start.tag_ == "WRB" and following is not None and following.tag_ in ("VBN", "VBG"))


_TIME_ABBREVIATIONS = frozenset({"a.m.", "p.m."})
_DAY_NAMES = frozenset(calendar.day_name)


def _time_goes_on(token: Token, following: Token) -> bool:
    """"a.m." or "p.m." after a number, when the sentence plainly goes on
    after it: a day name follows ("at 6 a.m. Sunday, ..."), or the words
    before it since the last sentence end hold no finite verb ("Just
    after 11 p.m. | Friday, the crew ..."): split there, the head is a
    fragment the gate drops, and the tail is stored without its opening."""
    doc = token.doc
    if token.lower_ not in _TIME_ABBREVIATIONS or token.i == 0:
        return False
    hour = doc[token.i - 1]
    if not (hour.like_num or hour.text.replace(":", "").isdigit()):  # "6", "4:30"
        return False
    if following.text in _DAY_NAMES:
        return True
    start = _clause_start(doc, token.i)
    return following.is_alpha and not any(t.tag_ in FINITE_TAGS for t in doc[start.i : token.i])


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


def _spaced_ellipsis_end(token: Token) -> bool:
    """The last period of a spaced ellipsis (". . .")."""
    doc = token.doc
    return token.text == "." and token.i >= 2 and all(doc[k].text == "." and doc[k].whitespace_ == " " for k in (token.i - 2, token.i - 1))


def _closed_title_goes_on(token: Token) -> bool:
    """"!" or "?" closing a quotation whose next word is lowercase: a quoted
    title or exclamation inside the sentence ('the "Stop Now!" campaign',
    'shouted "Go!" and ran'), not a sentence end; or whose next words are a
    name and a verb of saying: the quotation's attribution ('"Is it?" Ann
    Walsh asked.'), which would be stored as a fragment of its own."""
    doc = token.doc
    k = token.i + 1
    if k + 1 >= len(doc) or token.whitespace_ or not doc[k].is_quote or not doc[k].whitespace_:
        return False
    if doc[k + 1].is_lower and doc[k + 1].is_alpha:
        return True
    return _attribution_from(doc, k + 1)


def _attribution_from(doc: Doc, i: int) -> bool:
    """Tokens from i are a name of one to MAX_NAME_WORDS words and a verb of saying in the past or present,
    then a comma or a period: not a clause of its own ('... witnessed!" Eubanks said it was ...')."""
    k = i
    while k < len(doc) and k - i < MAX_NAME_WORDS and doc[k].is_title and doc[k].tag_ in ("NNP", "NNPS"):
        k += 1
    return i < k < len(doc) - 1 and doc[k].lower_ in SAYING_FORMS and doc[k + 1].text in (",", ".")


_WORD_END_DASHES = ("-", "\u2013", "\u2014")


def _hyphen_ended_word(token: Token) -> bool:
    """A lowercase function word with a hyphen or dash written against its
    end ("while-", "that-"): no sentence ends on such a word, so it goes on.
    A noun before one ("Court orders stop to museum merger- As a result")
    may end a heading run into the next sentence: left to the parser."""
    word = token.text[:-1]
    return token.text.endswith(_WORD_END_DASHES) and word.isalpha() and word.islower() and word in STOP_WORDS


@Language.component(PARSER_GUARDS)
def sentence_guards(doc: Doc) -> Doc:
    """Set the sentence starts the parser must respect (module docstring)."""
    _bracket_guards(doc)
    _quotation_guards(doc)
    restated, caps, names = heading_starts(doc)
    for i in restated + caps + names:
        if doc[i].is_sent_start is None:
            doc[i].is_sent_start = True
    for i in names:
        for k in range(i + 1, min(i + MAX_NAME_WORDS, len(doc))):
            if doc[k].is_title:
                _forbid(doc[k])  # not inside the name that opens the sentence ("Ann Walsh | Ann | Walsh's ...")
    for i in restated:
        for k in range(i + 1, min(i + MAX_NAME_WORDS, len(doc))):
            if not (doc[i].is_title and doc[k].is_title):
                break
            _forbid(doc[k])  # nor inside a name that opens it after a title ("... to Cork | Harbour | Lines will ...")
    tokens = list(doc)  # one Token object a position for the pass below, not one per lookup
    for token, following in zip(tokens, tokens[1:]):
        kind = _abbreviation(token)
        if kind == "title" or (kind == "other" and not opens_sentences(following)):
            _forbid(following)
        elif _time_goes_on(token, following):
            _forbid(following)  # "Shortly before 4:30 a.m. Thursday, they voted"
        elif token.text[:-1] in NAME_SUFFIXES and token.text.endswith(".") and ((following.is_lower and following.is_alpha) or following.tag_.startswith("VB")):
            _forbid(following)  # "Thomas Walsh Jr. said"
        elif _unit_after_number(token) and following.is_sent_start is None and opens_sentences(following):
            following.is_sent_start = True  # "spent ?490m. The minister said"
        elif token.text == "?" and not token.whitespace_ and following.like_num:
            _forbid(following)
        elif _hyphen_ended_word(token):
            _forbid(following)  # "supported him, while- Tom Byrne resigned"
        elif _lost_letter_goes_on(token):
            _forbid(following)  # "told RT? News they had": a lost accented letter
        elif token.text == "." and following.text == "." and token.whitespace_:
            _forbid(following)  # inside a spaced ellipsis ". . ."
        elif _spaced_ellipsis_end(token) and following.is_lower and following.is_alpha:
            _forbid(following)  # "... comparative theology. . . as truly constructive"
        elif (token.text in _ENDS or _dotted(token)) and following.is_lower and following.is_alpha:
            _forbid(following)  # a mark inside a name ("the band Neu! having split"), or "etc. and"
        elif token.text in _ENDS and _closed_title_goes_on(token):
            _forbid(following)  # a quoted title: 'its "Stop Now!" campaign'
            _forbid(doc[following.i + 1])
        elif following.is_sent_start is None and following.is_title and fused_heading(doc, token.i + 1):  # each form starts title-case
            following.is_sent_start = True
            for k in range(following.i + 1, min(following.i + MAX_NAME_WORDS, len(doc))):
                if not (name_word(following) and name_word(doc[k])):
                    break
                _forbid(doc[k])  # not inside the name that opens the sentence ("... to Wales | Theresa | May said")
    return doc
