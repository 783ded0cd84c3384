"""Cleaning raw document text into prose, and spotting template holes.

`clean_text` turns WikiExtractor-style article text, or text shipped one
line per article (news, speeches), into prose paragraphs joined by "\\n"
(ARCHITECTURE.md "The experiment"):

- odd whitespace is normalised first (non-breaking, thin and ideographic
  spaces become " "; zero-width spaces, word joiners, BOMs and soft hyphens
  are removed; line and paragraph separators become "\\n");
- a picture's caption its layout marks (a dash after a run of spaces, up to
  the next run) is dropped, if it ends in a photo credit or is short; so is
  one between two runs of spaces without a dash that ends in a photo credit
  (`drop_marked_captions`);
- the mojibake of curly quotes and dashes that datasets ship is repaired
  (`repair_mojibake`), so that quotation marks can be tracked;
- the repeated title line is dropped; lines hard-wrapped inside a paragraph
  are re-joined;
- section headings are dropped, in both forms: WikiExtractor's short line
  ending in one period ("Early life.") and wiki markup at any level
  ("== Early life ==", "=== Works ==="); an appendix heading (See also,
  References, ...) ends the article;
- lines that are not prose are dropped: indentation and list lines (leading
  ":", ";", "*", "#", bullets), image and caption lines ("File:", "Image:",
  "thumb|", "alt=", "upright", "250px"), template residue (any "|" left once
  wiki links are unwrapped), tables, code, formulas, category lines, and
  lines without a sentence end (list stubs, captions, table cells). A
  document shipped as one line (news, speeches) is not read as markup (a
  leading space is not indentation, "upright" is not an image option): its
  line is kept if it has a sentence end anywhere, and what follows the last
  one ("... the end. Learn more") is dropped as a sentence without an end
  (engine.corpus.sentence_gate); a run of three spaces or more after a word
  that ends no sentence is a line break it lost (`_LOST_LINE_BREAK`): the
  line is cut there, and each piece is read so;
- inline wiki links are unwrapped ("[[Tate Britain]]" -> "Tate Britain",
  "[[anthropology|anthropologist]]" -> "anthropologist"); parentheses left
  empty by a removed template are removed ("Xanten Cathedral ()," ->
  "Xanten Cathedral,"), as are separators left at their edges
  ("(MCC; , , )" -> "(MCC)").

`template_hole` names the hole a removed template left in a sentence
(" .", "At , Alabama", "( years ago)", ", ,", '""' ...). Such a sentence
cannot be repaired (a value is missing), so engine.corpus.segmentation drops it
from its document before screening: it is never a needle sentence and never
part of a window.
"""

from __future__ import annotations

import html
import re

from engine.corpus.page_rows import ends_in_credit
from engine.needles.quotation import inside_after, mark_role

# Sections that only ever hold apparatus (lists of links, citations, notes),
# and by Wikipedia's layout guideline (MOS:ORDER) come after the article's
# prose. The first one found ends the article. Titles that also name real
# content sections are deliberately absent: "Literature" (a country's or a
# movement's literature), "Gallery" (may sit mid-article; its captions are
# dropped line by line anyway), "Works", "Publications", "Discography" and
# the like (lists, dropped line by line, and sometimes followed by prose).
APPENDIX_HEADINGS = frozenset(
    {
        "see also",
        "references",
        "external links",
        "notes",
        "further reading",
        "bibliography",
        "sources",
        "citations",
        "footnotes",
        "works cited",
        "notes and references",
        "references and notes",
        "selected bibliography",
        "external sources",
    }
)

_WORD = re.compile(r"[^\W_]")  # a letter or a digit, in any script
_TERMINAL = re.compile(r"[.!?][\"'”’)\]]*$")
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*(?:\s|$)")
_HEADING_MAX_WORDS = 8
_HEADING_MAX_CHARS = 60
_FINITE_VERBS = frozenset(
    "is was are were has had have be been will would can could may might must shall should does did do".split()
)
_MARKUP_HEADING = re.compile(r"^\s*(={1,6})(?!=)\s*(.*?[^=\s])\s*\1\s*$")
_TAGS = re.compile(r"<[^<>]{0,200}>")
_SPACES = str.maketrans(
    {
        **dict.fromkeys(map(ord, "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"), " "),
        **dict.fromkeys(map(ord, "\u200b\u2060\ufeff\u00ad"), None),
        **dict.fromkeys(map(ord, "\u2028\u2029\u0085\v\f"), "\n"),
    }
)
# "[[target|label]]" -> label; also "[[target]" (one bracket short, seen in the sample)
_LINK = re.compile(r"\[\[(?:[^\[\]|]*\|)?([^\[\]|]*)\]\]?")
_LIST_MARK = re.compile(r"^(?:[*#:;•·\-–—]|\d+[.)]\s)")
_IMAGE_LINE = re.compile(r"^\[*\s*(?:File|Image|Media):|thumb\||\|\s*thumb\b|\balt\s*=|\bupright\b|\b\d+px\b", re.IGNORECASE)
_CODE_CHARS = re.compile(r"[{};=<>\\]")
_EMPTY_PARENS = re.compile(r"\s*\((?:[\s;,]*)\)")
_LEADING_SEPARATORS = re.compile(r"\((?:\s*[;,])+\s*")
_TRAILING_SEPARATORS = re.compile(r"(?:\s*[;,])+\s*\)")
_RUNS_OF_SPACES = re.compile(r"[ \t]{2,}|\t")


def normalise_whitespace(text: str) -> str:
    """Odd spaces to " ", invisible characters removed, line separators to "\\n"."""
    return text.replace("\r\n", "\n").replace("\r", "\n").translate(_SPACES)


# Mojibake of the news dataset (../shared/data/README.md): each curly quote,
# apostrophe and dash became '"', and a space after one often became "?" (or
# U+FFFD): 'the "last king of coal"?said', 'administration "?long accused',
# '"\ufffdOr', 'don"t'; a lost paragraph break often left "-" ("succeed.- Unlike"),
# sometimes after a stray "*" or before a bracket ("her story.*-Abused ...", "no more.-(Seriously, ...").
_SPACE_LOST_AFTER_QUOTE = re.compile(r'"\?(?=[^\s?!.,;:])')
_MARK_BEFORE_LOST = re.compile('"\ufffd+')
_APOSTROPHE_AS_QUOTE = re.compile(r'(?<=[A-Za-z])"(?=[a-z])')
_NEGATION_APOSTROPHE = re.compile(r'n"t\b')
# between two words, a space each side: a dash, not a quotation; so are its forms with the
# dash's own hyphen left before the mark or the lost space after it ('party -"?the', 'watched "? yet')
_DASH_AS_QUOTE = re.compile(r'(?<=\w) -?"\??(?= \w)')
_BREAK_AS_DASH = re.compile(r'(?<=[.!?"])[ \t]*\*?-+(?:[ \t]+|(?=[A-Z"(\[]))(?=[A-Z"(\[])')
# the same residue right after a colon, the space lost with the break ('Fallon answered:-"We\'ve', 'his statement
# reads:- I joined'): left there, it hides the colon from the rules that read what a colon introduces (a speech
# printed in full, an answer without quotation marks). A dash after the colon's space is a list's mark ('the
# following: -That the Congress', in the addresses), not this residue, and stays.
_BREAK_AFTER_COLON = re.compile(r'(?<=:)\*?-+[ \t]*(?=[A-Z"(\[])')
# A picture's caption set off by its layout: a run of spaces before it, the next run after it. China Daily marks it
# with a dash after the run ("... he sees all.   - A cook at work. Ann Walsh / For Cork Echo  He listens"), which
# _BREAK_AS_DASH would erase, so captions go before it: a marked one that ends in a photo credit, or a short one (a
# layout break as long as a paragraph is as likely prose: kept, its mark erased as before); an unmarked one only if
# it ends in a photo credit ("... uncovered.   A cook at work. Provided to Cork Echo  He listens": on the news
# corpus, seven such pieces, all captions).
_LAYOUT_CAPTION = re.compile(r'(?<=\S)[ \t]{2,}(?P<dash>\*?-+[ \t]+)?(?=[A-Z"(\[])(?P<caption>[^\n]*?)(?=[ \t]{2,}|\n|$)')
MAX_UNCREDITED_CAPTION = 200
# In text shipped as one line, a run of three spaces or more after a word that ends no sentence, before a capital,
# is a line break the text lost: what ends there is a heading, a timeline's date, a credit, a tweet's tags, a
# lead-in or a broadcast notice ("... at 10 p.m. ET   Smith, a ..."), never the middle of a sentence. Two spaces are
# not enough: they also end a photo credit run into a digest's next heading ("Ann Walsh / Cork Echo  Pier to reopen The
# board said ..."), and cutting the credit off there would store the heading fused onto the sentence.
_LOST_LINE_BREAK = re.compile(r'(?<=[^\s.!?"\'\u201d\u2019])[ \t]{3,}(?=["\u201c]?[A-Z])')
# after a plural's "s", before a lowercase word, a figure or "$": the apostrophe of
# a plural possessive ('the farmers" union') when no quotation is open there
_PLURAL_POSSESSIVE = re.compile(r'(?<=[a-z]s)"(?= (?:[a-z]|\$|\d))')


def repair_mojibake(text: str) -> str:
    """Undo the dataset mojibake above: '"?said' -> '" said', '"\ufffdOr' ->
    '"Or', 'don"t' -> "don't", 'the farmers" union' -> "the farmers' union", 'word " word' -> 'word \u2014 word', '.- Unlike' -> '. Unlike', 'reads:- I' -> 'reads: I'.
    Text without these forms (the Wikipedia sample) is unchanged."""
    if _SPACE_LOST_AFTER_QUOTE.search(text) or _MARK_BEFORE_LOST.search(text):
        # only in text that shows the mojibake: elsewhere 'the "kathaa"s' is a quotation
        text = _SPACE_LOST_AFTER_QUOTE.sub('" ', text)
        text = _MARK_BEFORE_LOST.sub('"', text)
        text = _APOSTROPHE_AS_QUOTE.sub("'", text)
        text = _DASH_AS_QUOTE.sub(" \u2014", text)
        text = _plural_possessives(text)  # after the dashes: ' " ' is no mark
    else:
        text = _NEGATION_APOSTROPHE.sub("n't", text)  # 'don"t' is never a quotation
    return _BREAK_AFTER_COLON.sub(" ", _BREAK_AS_DASH.sub(" ", text))


def drop_marked_captions(text: str) -> str:
    """`text` without the captions its layout sets off (`_LAYOUT_CAPTION`); the runs of spaces around one stay."""

    def dropped(found: re.Match[str]) -> str:
        caption = found.group("caption")
        short = found.group("dash") is not None and len(caption) <= MAX_UNCREDITED_CAPTION
        return "  " if short or ends_in_credit(caption) else found.group(0)

    return _LAYOUT_CAPTION.sub(dropped, text)


def _plural_possessives(text: str) -> str:
    """'the farmers" union' -> "the farmers' union", where no quotation is open
    at the mark (each mark read by its spacing, engine.needles.quotation) and
    its sentence holds no mark before it that it could close ('called them
    "the bosses" and left', 'senators-"wacko birds" for': kept). A lone
    closing mark in a sentence otherwise makes the sentence read as quoted."""
    chars, inside, since = list(text), False, 0  # since: marks left in this sentence before the mark
    possessive = {m.start() for m in _PLURAL_POSSESSIVE.finditer(text)}
    for found in re.finditer(r'"|\n|[.!?] ', text):
        at = found.start()
        if text[at] == "\n":
            inside, since = False, 0
        elif text[at] != '"':
            since = 0
        elif at in possessive and not inside and since % 2 == 0:
            chars[at] = "'"
        else:
            inside, since = inside_after(inside, mark_role(text, at)), since + 1
    return "".join(chars)


LOST_CHARACTER = "\ufffd"  # a character the dataset could not decode

# Titles written before a name, and lowercase abbreviations that run on
# inside a sentence: no sentence ends after them (engine.corpus.sentence_guards,
# engine.corpus.boilerplate). spaCy's tokenizer exceptions hold some of the titles.
_SINGLE_TITLES = (
    "Adm Brig Capt Cdr Cmdr Col Cpl Det Dr Fr Gen Gov Hon Insp Lt Maj Messrs Mr Mrs Ms Mt Pres Prof Pte Pvt "
    "Rep Rev Rt Sen Sgt Sr St Supt".split()
)
# each title's plural, before two names or more ("Sens. Ann Walsh and Tom Byrne", "Drs. ..."), but of a title ending
# in "s" ("Pres" + "s" is "Press", which ends sentences); and "Ret." (retired) before a rank ("Ret. Vice Adm. ...")
TITLES = frozenset(_SINGLE_TITLES + [t + "s" for t in _SINGLE_TITLES if not t.endswith("s")] + ["Ret"])
ABBREVIATIONS = frozenset("al approx c ca cf ed eds fl lit op pp viz vol vols vs".split())
# Suffixes written after a name: a sentence may end after one ("... named for
# Thomas Walsh Jr."), but not before a lowercase word or a verb ("Jr. said").
NAME_SUFFIXES = frozenset({"Jr"})


def has_word(text: str) -> bool:
    """True when `text` holds a letter or a digit (a word, not only punctuation)."""
    return _WORD.search(text) is not None


def heading_title(line: str) -> str | None:
    """The title of a section heading line, else None: wiki markup at any
    level ("== Early life =="), or WikiExtractor's short line ending in one
    period ("Early life and education.") with no other sentence end."""
    markup = _MARKUP_HEADING.match(line)
    if markup:
        return markup.group(2)
    stripped = line.strip()
    if not stripped.endswith(".") or len(stripped) > _HEADING_MAX_CHARS:
        return None
    body = stripped[:-1]
    if not body or re.search(r"[.!?;:]", body):
        return None
    words = body.split()
    # a short sentence of its own ("Alpha is a letter.") has a finite verb;
    # headings rarely do. Short sentences without one of these are lost,
    # which only shortens a document.
    if len(words) <= _HEADING_MAX_WORDS and not any(w.lower() in _FINITE_VERBS for w in words):
        return body.strip()
    return None


def is_heading(line: str) -> bool:
    return heading_title(line) is not None


def _is_table_or_code(line: str) -> bool:
    if line[:1] in (" ", "\t"):  # indented: code, verse, preformatted
        return True
    if line.startswith(("{|", "|", "!")) or "||" in line or line.count("\t") >= 2:
        return True
    if "formula_" in line or line.startswith("[[") or "[[Category:" in line:
        return True
    return len(_CODE_CHARS.findall(line)) > max(3, len(line) // 25)


def _is_markup(line: str) -> bool:
    """Indentation, list, image/caption or table/code lines, and lines that
    still hold a "|" (template residue) once links are unwrapped."""
    return (
        _is_table_or_code(line)
        or _LIST_MARK.match(line) is not None
        or _IMAGE_LINE.search(line) is not None
        or "|" in _LINK.sub(r"\1", line)
    )


def clean_text(text: str, title: str = "") -> str:
    """Prose paragraphs of a Wikipedia article, joined by "\\n"."""
    text = html.unescape(html.unescape(text))  # WikiExtractor double-escapes some entities
    text = repair_mojibake(drop_marked_captions(normalise_whitespace(_TAGS.sub(" ", text))))
    lines = [line.rstrip() for line in text.split("\n")]
    lines = _drop_title(lines, title)
    lines = _join_wrapped(lines)
    # text shipped one line per document (news, speeches): its last sentence
    # may lack an end ("... Learn more"); segmentation drops that one alone
    one_line = sum(1 for line in lines if line.strip()) == 1
    # its pieces, if it lost line breaks, are read as lines, but not as WikiExtractor's headings (a short piece is prose)
    pieces = one_line and any(_LOST_LINE_BREAK.search(line) for line in lines)
    if pieces:
        lines = [piece for line in lines for piece in _LOST_LINE_BREAK.split(line)]
    paragraphs: list[str] = []
    for line in lines:
        if not line.strip():
            continue
        heading = None if pieces else heading_title(line)
        if heading is not None:
            if heading.lower() in APPENDIX_HEADINGS:
                break  # appendix sections run to the end of an article
            continue
        if one_line:  # a whole document: no markup line can be told by its start or a word in it
            if not _SENTENCE_END.search(line):
                continue
            line = line.strip()
        elif _is_markup(line) or not _TERMINAL.search(line):  # not prose: list stubs, captions, table cells
            continue
        line = _LINK.sub(r"\1", line)
        line = _EMPTY_PARENS.sub("", line)
        line = _TRAILING_SEPARATORS.sub(")", _LEADING_SEPARATORS.sub("(", line))
        line = _RUNS_OF_SPACES.sub(" ", line).strip()
        if has_word(line):
            paragraphs.append(line)
    return "\n".join(paragraphs)


def _drop_title(lines: list[str], title: str) -> list[str]:
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start < len(lines) and title and lines[start].strip() == title.strip():
        start += 1
    return lines[start:]


def _join_wrapped(lines: list[str]) -> list[str]:
    """Re-join a paragraph hard-wrapped across lines: a line without a
    sentence end followed by a line starting in lower case."""
    out: list[str] = []
    for line in lines:
        if (
            out
            and out[-1].strip()
            and line[:1].islower()
            and not _TERMINAL.search(out[-1])
            and not out[-1].rstrip().endswith(":")
        ):
            out[-1] = out[-1].rstrip() + " " + line.strip()
        else:
            out.append(line)
    return out


# ---------------------------------------------------------------------------
# Template holes

_DIRECTION = r"(?:(?:north|south)(?:-?(?:east|west))?|east|west)"
# (name, pattern): what a removed template ({{convert}}, {{lang}}, a date or
# an infobox value) leaves behind in the sentence around it.
HOLE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # "born in .", "At , Alabama", "the , ", "from to ,"; not an ellipsis ". . ."
    ("space before punctuation", re.compile(r"(?<![\s.])\s+[,;:.!?](?=[\s\"'”’)\]]|$)")),
    ("punctuation at the start", re.compile(r"^[,;:!?)\]]")),  # not ".": ".NET is"
    # ", ,", "Press, , 499 pages", "Hangul::", ", ."
    ("doubled punctuation", re.compile(r"[,;:]\s*[,;:.!?]")),
    # "( years ago)", "(sometimes up to )", "(Traditional Chinese: )", "( or X)"
    ("space inside parentheses", re.compile(r"\(\s|\s\)")),
    ("empty brackets", re.compile(r"\(\s*\)|\[\s*\]")),
    # 'appeared in "" as', "“”"; not '"A," "B"' (two quotations side by side)
    ("empty quotes", re.compile(r'""|“\s*”')),
    # "(equivalent to £ in )": a currency sign without an amount
    ("currency without amount", re.compile(r"(?:^|[\s(])[£$€¥](?=\s*(?:[^\d\s.]|$))")),
    # "Line from to ,", "between and"
    ("missing range", re.compile(r"\b(?:from\s+to|between\s+and)\b", re.IGNORECASE)),
    # "located about east of Dadaab" ({{convert}} removed)
    ("missing distance", re.compile(rf"\b(?:about|approximately|roughly|nearly|around|some)\s+{_DIRECTION}\s+of\b", re.IGNORECASE)),
    # "range from around in Los Gatos Creek", "with over of oil pumped", "by about in
    # less than two minutes": a degree word with its number removed ({{convert}})
    (
        "missing quantity",
        re.compile(
            r"\b(?:from|with|of|by|to|at|for|exceeds?|exceeded|exceeding|measuring|reaching)\s+"
            r"(?:over|about|around|approximately|roughly|nearly|almost|up to|more than|less than)\s+"
            r"(?:of|in|at|from|to|on|and|or)\b",
            re.IGNORECASE,
        ),
    ),
    # "produced over of diamonds a year", "raised to by $4 million": a quantity
    # word before "of" (not "the handing over of"), or two prepositions before an
    # amount, with the number between them removed
    ("missing amount", re.compile(r"\b(?:approximately|roughly|nearly)\s+of\b|(?<!ing )\bover\s+of\b|\b(?:to|by)\s+(?:to|by)\s+(?:[$£€]\s?)?\d", re.IGNORECASE)),
    # "the backup keeper in but did not play": a preposition before "but" and a
    # verb, its object (a year, a name) removed
    ("missing object", re.compile(r"\b(?:in|on|at|from|since|during|of|with|by)\s+but\s+(?:did|was|were|had|has|is|could|would|never)\b", re.IGNORECASE)),
    # "administered in the by organisations", "featured on the for Crowe's film": an
    # article with a preposition right after it, the noun phrase between them removed
    # (lowercase "a" only: "grade A for"; not "a by-election", "the into-the-wild tour")
    ("missing noun", re.compile(r"(?<![-\w'\u2019])(?:[Tt]he|an|a)\s+(?:of|for|by|from|with|into)\b(?![-\w'\u2019])")),
    # wiki markup that cleaning could not resolve
    ("wiki markup", re.compile(r"\[\[|\]\]|\{\{|\}\}")),
)


def template_hole(sentence: str) -> str | None:
    """The name of the first template hole found in `sentence`, or None."""
    for name, pattern in HOLE_PATTERNS:
        if pattern.search(sentence):
            return name
    return None
