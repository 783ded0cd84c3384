"""Rows of a printed or web page that the parser reads as sentences.

Tables, numbered lists, photo captions and related-article teasers lose
their layout when a text is shipped as running prose, and their rows come
out as "sentences" that hold a verb and end in a period. Each rule reads a
mark that prose does not use; none depends on one outlet's wording.

`row_kind(text)`, for one sentence, why it is such a row, or None:

- "table_row": dot leaders (five dots or more: "Harbour dues..........pence
  4.5"), or three decimal numbers in a row with nothing but spaces between
  ("1.20 1.35 1.40"): a table's rows run together. A prose ellipsis ("...",
  "....") is kept, and so are lists of years ("in 1980, 1984, 1988") and
  telephone numbers ("1800 666 111").
- "list_entry": the sentence opens with a Roman list numeral ("II. Pilots
  are paid ...", "I. No vessel ..."; a lone "I." only before a function
  word or an all-capitals word, so an initial "I. M. Pei" is not taken).
  Arabic numerals and letters are engine.corpus.sentence_gate's.
- "caps_heading": an all-capitals heading of two or more words, one of them
  of five letters or more, run into the capitalised word that opens the
  sentence ("HARBOUR REVENUE I shall now turn ...", "PUBLIC WORKS The board
  ..."); an acronym and a name ("UUP MP Danny Byrne said") is not one.
- "caption": a photo caption or credit: a parenthesised position word
  ("Ann Walsh (second left) cuts the ribbon", "(pictured)"; not a party
  "(R)"), or one set off by commas after the name that opens the sentence
  ("Ann Walsh, left, cuts the ribbon"), a sentence opening with "Pictured", or a credit ("Photo:",
  "Photos provided to ...", "Image courtesy of ...", "(Credit: ...)", a
  picture agency's stamp run into the sentence after it: "Getty Images
  Lloyd's of London, ..." -- one to three capitalised words and "Images"
  before a capital).
- "photo_credit": a sentence opening with a photographer's name, a slash
  and the outlet ("Ann Walsh / For Cork Echo The pier ..."); not a gallery
  mark (a digest's credits stand a few sentences apart around its briefs).
- "teaser": a numeric date stamp in brackets ("(04.05.2016)") that opens
  the sentence or follows its end, the mark of a related-article teaser (one
  inside a clause, "begins on Friday (17.02.2017).", is the writer's date); or a one-line dispatch byline ("Mary Doyle
  reports from Kinsale."); or a link line that opens it, "Read more" and a
  preposition ("Read more from Laura Asked by ...", "Read more about the
  toxin Bruce Bennett, a ..."): a link to another page, run into the
  sentence after it, which goes with it (the words after a name do not say
  where the link's words end).
- "gallery": a sentence announcing the page's picture gallery ("The gallery
  below revisits ...", "Click through the gallery above to ..."): it points
  at what the text does not hold; not a room ("a gallery above the nave").
- "contact_listing": a telephone number (`telephone_number`) in a sentence
  whose parts are set off by semicolons ("Harbour Tours, Quay Street, Cobh;
  +353 21 481 1234; trips from 20 euros per person"): the entry of a
  directory (a business's name, address, telephone, prices), whose fields
  are no clause, run into the next entry's name and first sentence. A
  telephone number in prose ("... is asked to call the Garda on 1800 666
  111.") is no listing: engine.corpus.hay_check refuses it for rand hay only.

`row_neighbours(texts)`, for a document's parsed sentences in order (before
any is dropped), the indices of sentences that are rows only by their
place: the entry after a bare list numeral the parser split off ("II." |
"Pilots are paid by the day."), and the teasers around date stamps (the
sentence before each stamp, and all between two stamps at most
MAX_TEASER_SENTENCES apart; before the first stamp of such a run, as many
sentences as the run's longest teaser, and at least TEASER_LEAD_SENTENCES:
nothing marks where a teaser paragraph starts, and keeping its first line
leaves a teaser's lead in the text), and the text of a picture gallery
(engine.corpus.page_rows.gallery_run: the sentences between gallery marks
at most MAX_GALLERY_SENTENCES apart, and the last entry after them; and
every sentence after one announcing "the gallery below").

A gallery mark is a caption (row_kind's "caption") or a sentence that
points at its picture: "This image shows ...", "This picture, taken in
March, shows ...", "This photo of the temple was taken in 2014", or
", shown here,". A bracketed "(pictured above)" set in prose is not one: on
tuning news it marks an article's own sentence as often as a gallery's (only
"(pictured)" itself is a caption, by row_kind). One mark
alone is dropped only if it is a caption (prose may say "this photo shows
how little is left"); two marks close together make a run, and every
sentence of the run is gallery text, marked or not, and so are as many
sentences after its last mark as the longest gap between two of its marks:
a gallery's entries are printed as one caption sentence and a few more
about the same picture (the sentences before the first mark are kept: on
tuning news an article's prose runs up to its gallery). A gallery the text
announces as below it ("The gallery below revisits the painters of the
Leipzig School.") is all the text that follows the announcement: a page
sets its gallery last, and its entries carry no mark of their own
("Neo Rauch, 55, is regarded as ..."); on tuning news the one such
announcement is followed by two dozen sentences of gallery entries and the
author's line, nothing else. A gallery "above" holds no entries in the text (its captions were
not shipped): only its announcement goes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# what only a web page or a post carries: a link, a handle, an e-mail address, a hashtag
WEB_RESIDUE = re.compile(r"https?://|www\.|pic\.twitter\.com|\B@\w{2,}|\b[\w.]+@[\w-]+\.[a-z]|\B#[A-Za-z]\w+")
MAX_TEASER_SENTENCES = 4
MAX_GALLERY_SENTENCES = 4
# the sentences of a run's first teaser, whose start no mark shows: on the news corpus's 66 teasers between two
# stamps, 60 have three sentences or fewer (14 one, 46 two, 4 three), and first teasers of three and four were read
TEASER_LEAD_SENTENCES = 3

_DECIMAL = r"\d+\.\d+"
_TABLE_ROW = re.compile(rf"\.{{5,}}|(?<![\w.,$])(?:{_DECIMAL}\s+){{2}}{_DECIMAL}(?![\w])")
# a Roman numeral of two letters or more, or "I" before a function word or an all-capitals word
_ROMAN_ENTRY = re.compile(
    r"^(?:[IVXLC]{2,}|I(?=\.\s+(?:[A-Z]{2,}\b|(?:No|The|A|An|In|It|We|Our|All|Every|Each|Any|That|This|There)\b)))\.\s+\S"
)
_CAPS_HEADING = re.compile(r"^(?=(?:[A-Z'&-]+\s+)*[A-Z'&-]{5,}\s)(?:[A-Z][A-Z'&-]*\s+){2,}(?:I\s|[A-Z][a-z])")
_POSITION = re.compile(
    r"\((?:(?:second|third|far|top|bottom|front|back|centre|center)\s+)?(?:from\s+)?"
    r"(?:left|right|cent(?:er|re)|top|bottom|foreground|background|inset|pictured|l-r|left to right)\)",
    re.IGNORECASE,
)
# a position word set off by commas after the name that opens a caption ("Ann Walsh,
# left, cuts the ribbon", "Tom Byrne, above, inspects the quay"): a lowercase verb follows
_NAME_POSITION = re.compile(
    r"^(?:[\w'\u2019.-]+\s+){0,4}[A-Z][\w'\u2019.-]*,\s+(?:(?:far|second|third|top|bottom|front|back)\s+)?"
    r"(?:from\s+)?(?:left|right|above|below|cent(?:er|re)|pictured|l-r|left to right),\s+[a-z]"
)
_CREDIT = re.compile(
    r"^Pictured\b|\b(?:Photo|Photograph|Picture|Image)s?(?:\s+credit)?\s*:|"
    r"\b(?:Photo|Photograph|Image)s?\s+(?:by|courtesy|provided)\b|\bProvided to [A-Z]|"
    # "(Credit: Ann Walsh/Cork Echo)"; a picture agency's stamp run into the sentence
    # after it ("Harbour Images The pier ...": one to three capitalised words, then
    # "Images" and a capital; not "Pictures", a film studio's: "Sony Pictures Entertainment said")
    r"\bCredit\s*:|^(?:[A-Z][\w.&'\u2019-]*\s+){1,3}Images\s+(?=[A-Z\"\u201c])"
)
_POINTS_AT_PICTURE = re.compile(
    r"\bThis\s+(?:image|picture|photo(?:graph)?)\b[^.!?]{0,80}?\b(?:shows?|was\s+taken)\b|"
    r",\s+(?:pictured|seen|shown)\s+(?:here|above|below),",
    re.IGNORECASE,
)
# a sentence announcing the page's picture gallery: "The gallery below shows ...",
# "Click through the gallery above to see ...", "in the picture gallery below"
_NOT_A_PLACE = r"(?!\s+(?:the|a|an|its|his|her|their|this|that|which)\b)"  # not "a gallery above the nave"
_GALLERY_ANCHOR = re.compile(
    rf"\b(?:gallery|galleries|slideshow|slide\s+show)\s+(?:below|above)\b{_NOT_A_PLACE}|"
    r"\b(?:click|scroll|swipe)\s+(?:through|down)\b[^.!?]{0,40}?\b(?:gallery|slideshow|pictures|photos|images)\b",
    re.IGNORECASE,
)
_GALLERY_BELOW = re.compile(rf"\b(?:gallery|galleries|slideshow|slide\s+show)\s+below\b{_NOT_A_PLACE}", re.IGNORECASE)
_READ_MORE = re.compile(r"^Read\s+more\s+(?:from|about|on)\b")
# a teaser's date stamp: a bracketed numeric date that opens a sentence or follows a sentence end ("... Ann Walsh
# reports. (09.02.2017)"); one inside a clause is the writer's own date ("begins on Friday (17.02.2017).")
_STAMP = r"\(\d{1,2}[./]\d{1,2}[./](?:\d{2}|\d{4})\)"
_DATE_STAMP = re.compile(rf"(?:^|[.!?][\"'\u201d\u2019)]*\s*){_STAMP}")
_STAMP_FIRST = re.compile(rf"^{_STAMP}")
_STAMP_ALONE = re.compile(rf"^{_STAMP}$")
_BYLINE = re.compile(r"^[A-Z][\w.'\u2019-]*(?:\s+[A-Z][\w.'\u2019-]*){0,3}\s+reports?\s+from\s+[A-Z][^.!?]{0,60}\.$")
# a telephone number: groups of digits split by single spaces or hyphens, after an optional
# international "+<code>" (a bracketed area code allowed); telephone_number checks the groups
_PHONE = re.compile(r"(?<![\w.,$/])(\+\s?\d{1,3}[\s-]*)?(\(?\d{2,4}\)?(?:[ -]\d{2,5}){1,4})(?![\w,]|\.\d)")
MIN_PHONE_DIGITS = 7
_BARE_NUMERAL = re.compile(r"^\(?(?:[IVXLC]+|\d{1,3}|[a-z])[.)]$")
# a photo credit: the photographer's name, a slash and the outlet ("Ann Walsh / For Cork Echo", "Tom Byrne / Xinhua")
_SLASH_CREDIT = re.compile(r"^(?:[A-Z][\w.'\u2019-]*\s+){1,3}/(?:\s|$)")
# an author's line: a name of two or three capitalised words, "is", a role, then where ("at", "with", "for" an outlet)
_AUTHOR_LINE = re.compile(
    r"^(?P<name>(?:[A-Z][\w'\u2019-]+\s+){1,2}[A-Z][\w'\u2019-]+)\s+is\s+(?:an?\s+|the\s+)?[^.!?;:]{0,80}?"
    r"\b(?:at|with|for)\s+(?:the\s+)?[A-Z][^.!?;:]*\.$"
)
AUTHOR_LINE_PLACES = 2  # an author's line is one of the last two sentences of a document
# a credit that closes a caption: the photographer, a slash and the outlet ("... the pier. Ann Walsh / For Cork Echo"),
# or a credit phrase ("... the pier. Photos provided to Cork Echo", "Photo by Tom Byrne", "Getty Images")
_CLOSING_CREDIT = re.compile(
    r"(?:^|\s)(?:[A-Z][\w.'\u2019-]*\s+){1,3}/\s+[A-Z][\w&.'\u2019-]*(?:\s+[A-Z][\w&.'\u2019-]*){0,3}$|"
    r"\b(?:(?:Photo|Photograph|Image)s?\s+(?:[Pp]rovided|[Bb]y|[Cc]ourtesy)\b|Provided to [A-Z])[^.!?]*$|\bGetty Images$"
)


def telephone_number(text: str) -> str | None:
    """The first telephone number in `text`, or None: at least
    MIN_PHONE_DIGITS digits in groups split by single spaces or hyphens,
    either after an international "+<code>" or in three groups or more
    ("082 373 5950", "+27 79 051 8558", "1-800-273-8255", "1800 666 111");
    not a figure with thousands split by spaces ("2 000 000": groups of three
    after the first), nor a run of years ("1980 1984 1988"), nor a range of
    two numbers ("1990-1995")."""
    for match in _PHONE.finditer(text):
        groups = re.findall(r"\d+", match.group(2))
        if sum(map(len, groups)) < MIN_PHONE_DIGITS:
            continue
        international = bool(match.group(1))
        if not international and len(groups) < 3:
            continue
        if not international and len(groups[0]) <= 3 and all(len(g) == 3 for g in groups[1:]):
            continue  # thousands split by spaces
        if all(len(g) == 4 and g[:2] in ("19", "20") for g in groups):
            continue  # years
        return match.group(0)
    return None


def row_kind(text: str) -> str | None:
    """Why the sentence `text` is a row of a table, a list, a caption or a teaser, or None (module docstring)."""
    if _TABLE_ROW.search(text):
        return "table_row"
    if _ROMAN_ENTRY.match(text):
        return "list_entry"
    if _CAPS_HEADING.match(text):
        return "caps_heading"
    if _POSITION.search(text) or _NAME_POSITION.match(text) or _CREDIT.search(text):
        return "caption"
    if _SLASH_CREDIT.match(text):
        return "photo_credit"
    if _DATE_STAMP.search(text) or _BYLINE.match(text) or _READ_MORE.match(text):
        return "teaser"
    if _GALLERY_ANCHOR.search(text):
        return "gallery"
    if ";" in text and telephone_number(text):
        return "contact_listing"
    return None


def ends_in_credit(text: str) -> bool:
    """Whether `text` ends in a photo credit (a caption's last words: `_CLOSING_CREDIT`)."""
    return _CLOSING_CREDIT.search(text.rstrip()) is not None


def _runs(marks: Sequence[int], gap: int) -> list[list[int]]:
    """The ascending indices `marks` grouped into runs whose neighbours have at most `gap` sentences between them."""
    runs: list[list[int]] = []
    for k in marks:
        if runs and k - runs[-1][-1] - 1 <= gap:
            runs[-1].append(k)
        else:
            runs.append([k])
    return runs


def gallery_run(texts: Sequence[str]) -> dict[int, str]:
    """{index: "gallery"} of the sentences of a picture gallery's runs (module docstring)."""
    marks = [k for k, text in enumerate(texts) if _POINTS_AT_PICTURE.search(text) or row_kind(text) == "caption"]
    found: dict[int, str] = {}
    for run in (run for run in _runs(marks, MAX_GALLERY_SENTENCES) if len(run) > 1):
        # the last picture's entry goes on after its mark as long as the run's longest entry
        longest = max(b - a - 1 for a, b in zip(run, run[1:]))
        found.update(dict.fromkeys(range(run[0], min(len(texts), run[-1] + longest + 1)), "gallery"))
    # a gallery announced as below the text is all that follows its announcement
    below = next((k for k, text in enumerate(texts) if _GALLERY_BELOW.search(text)), None)
    if below is not None:
        found.update(dict.fromkeys(range(below + 1, len(texts)), "gallery"))
    return found


def author_line(texts: Sequence[str]) -> dict[int, str]:
    """{index: "author_line"} of an author's line among a document's last
    AUTHOR_LINE_PLACES sentences: a person the text never names before,
    described by a role and an outlet ("Ann Walsh is harbour correspondent
    at the Cork Echo."). A person the article is about is named before
    (an interviewee's own line is kept)."""
    found: dict[int, str] = {}
    for k in range(max(1, len(texts) - AUTHOR_LINE_PLACES), len(texts)):
        match = _AUTHOR_LINE.match(texts[k])
        if match is None:
            continue
        surname = match.group("name").split()[-1]
        if not any(re.search(rf"\b{re.escape(surname)}\b", text) for text in texts[:k]):
            found[k] = "author_line"
    return found


def row_neighbours(texts: Sequence[str]) -> dict[int, str]:
    """{index: reason} of the sentences that are rows by their place (module docstring)."""
    found: dict[int, str] = {}
    for k, text in enumerate(texts[:-1]):
        if _BARE_NUMERAL.match(text):
            found[k + 1] = "list_entry"
    found.update(gallery_run(texts))
    for k, text in enumerate(texts[1:], start=1):
        if _SLASH_CREDIT.match(text):
            found[k - 1] = "caption"  # the picture's caption, set just above its credit
    found.update(author_line(texts))
    stamps = [k for k, text in enumerate(texts) if _DATE_STAMP.search(text)]
    for run in _runs(stamps, MAX_TEASER_SENTENCES):
        # the last sentence of the teaser each stamp closes (the one before it, if the stamp opens its sentence),
        # and the first of the next (the stamp's own, if words follow the stamp in it)
        ends = [k - 1 if _STAMP_FIRST.match(texts[k]) else k for k in run]
        starts = [k if _STAMP_FIRST.match(texts[k]) and not _STAMP_ALONE.match(texts[k]) else k + 1 for k in run]
        longest = max([end - start + 1 for start, end in zip(starts, ends[1:])] + [TEASER_LEAD_SENTENCES])
        for k in range(max(0, ends[0] - longest + 1), run[-1]):
            if k not in run:
                found[k] = "teaser"
    return found
