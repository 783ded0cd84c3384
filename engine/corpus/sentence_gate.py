"""Which parsed "sentences" are sentences, and which may be needles.

Two questions about each sentence of a parsed document, both pure
functions of the parse:

`not_a_sentence(span, text)`: why a "sentence" is not one, or None. Such a
span is dropped from its document (engine.corpus.segmentation), so it is
never a needle and never part of a hay window. A sentence

- ends in a sentence end (".", "!", "?", "…", then closing quotes or
  brackets): a heading, a caption line, a byline or a text cut off mid-way
  does not ("Learn more", "Trouble on the Peninsula");
- has a finite verb (`VerbForm=Fin` in spaCy's morphology), or a verb as
  its root (an imperative: "Expect the president to ..."): a caption or a
  list item does not ("Damage from shelling on the outskirts of Donetsk.");
  (a Doc without morphology, built from words alone, is not asked);
- does not start in lowercase (a fragment cut from its sentence: "or keep
  Republicans off of theirs.");
- is not a list entry (a leading bullet, dash, or "1." / "(a)");
- does not start with an all-capitals label and a colon or a spaced dash,
  the form of link rows and kickers ("READ MORE: ...", "OPINION:",
  "WATCH - ..."), nor with one to three capitalised words and a colon
  before a capital (labelled list entries: "Railways: The new law ...");
- is not a legend or a cross-reference to what the text does not hold
  ("The winner is shown in bold.", "See the section below."): "legend";
- holds no web residue: a URL, an @handle, an e-mail address, a #hashtag
  (embedded posts, share rows, contact lines);
- holds no template hole (engine.corpus.cleaning.template_hole);
- is not a row of a table, a numbered list, a photo caption or a teaser
  (engine.corpus.page_rows.row_kind: dot leaders, "II. ...", an all-capitals
  heading run into it, "(left)", "Photo:", a "(04.05.2016)" date stamp);
- is not a list's lead-in run into its first item: a colon right after a
  preposition, before a capital ("... including: So-called starter homes
  will be ..."): "list_lead_in";
- shows no sign that the source lost a word (engine.corpus.lost_words: "who
  want feed the beast", "would enable the town pay for ...", "said that the
  that board", "in order repair"): "missing_word";
- is not only a subordinate clause: a subordinator opening it on the
  parser's root and no verb of a main clause after the root's clause
  ("As has been the case for years."): "subordinate_clause";
- holds no second sentence run into it after a heading or a caption: a
  word that only opens sentences, capitalised right after a lowercase word
  ("run_on_heading": engine.corpus.run_on_headings.opener_after_word).

`needle_refusals(doc, spans)`: for each kept sentence, "" when it may be a
needle sentence, else why not. The prepare scan asks this before any needle
type's rule, so neg, con and ner all skip such a sentence and the scan moves
on to the next one:

- "quoted": it starts inside a quotation opened in an earlier sentence of
  its paragraph and not yet closed, or it opens with a quotation mark
  ('"We start in May," she said.': only the attribution is the writer's),
  or its own marks are not clear double quotation marks that open and
  close in turn. A sentence with a closed quotation inside prose of its
  own ('He called the plan "a disgrace" on Monday.') may be a needle: the
  rules of engine.needles refuse an edit between its marks. Quotation
  state is tracked across sentences from engine.needles.quotation's marks
  (each mark's role read from its spacing, so one stray mark changes it
  only until the next clear one), double and single quotations apart: a
  single quotation closing inside a double one leaves the double one open,
  and a single mark opening one that no single mark closes before the
  paragraph ends is an elision ("'til", "'90s") and opens nothing. A short
  quotation opened with double marks inside an open double one ('"I cannot
  support this "skinny" budget.') is nested: its closing mark, within
  MAX_NESTED_TOKENS tokens, leaves the outer quotation open, when the outer
  one opened in the same sentence (a state carried from earlier sentences
  may come from a misread mark, and a nested reading would keep it open).
- "attribution_tail": it only says who spoke the quotation that closed right
  before it ('"Is it the adviser?" | Walsh said, in a reference to Byrne.':
  engine.needles.quotation.attribution_tail), as '"...," she said.' does.
- "abbreviation_end", "after_abbreviation": it ends in a title, or the
  sentence before it does ("Republican Sens." | "Ann Walsh and Tom Byrne
  said ..."): a sentence split there
  (engine.corpus.hay_check.split_at_abbreviation);
- "embedded_post": the gate dropped web residue right before and right
  after a short run of sentences holding it (a handle, a link:
  engine.corpus.hay_check.embedded_post_lines), so it is a line of an
  embedded post ("@ann:" | "Ferry cancelled again. The crews wait!" |
  "pic.twitter.com/..."), not the writer's prose;
- "after_abbreviation", "after_dropped_label", "after_dropped_title": the
  piece the gate dropped right before it was its own head (a title, a
  label and its colon, a role before a name: engine.corpus.hay_check
  .dropped_head): "READ MORE:" | "Ferry strike called off in Cork Ann
  Walsh said ...".
- "lost_characters": it holds U+FFFD, a character the dataset could not
  decode (a name cut mid-word: "Sinn F\\ufffd\\ufffdin").
- "glued_sentences": a sentence end glued to the next sentence through
  stray marks, without a space ("... told her story.*-Sexually abused
  ..."): two sentences the segmenter could not part;
- "table_entries": two or more "label - figure" entries run into it, a
  figure with thousands separators after a spaced dash or colon and
  before a capitalised word ("Domestic goods - $724,964,852 Foreign goods
  - 15,548,757 Total ..."): a table flattened into the prose;
- "heading_opening": it opens with a short verbless phrase run into a
  capitalised word (engine.corpus.run_on_headings.heading_opening), a
  heading the parser kept ("The whole picture Neo Rauch takes ..."); the
  reading is ambiguous, so the sentence stays in hay;
- "headline_before_subject": a headline run into a person's name that is a
  subject, where the parse shows two clauses without punctuation or a
  conjunction between (engine.corpus.run_on_headings.headline_before_subject:
  "Dublin gears up for the Easter Parade Mayor Tom Byrne pledged ..."); hay
  keeps it, as it does "heading_opening";
- "heading_inside": a caption or a subheading run into the middle of it,
  between a clause ending on a lowercase word and a capitalised clause
  (engine.corpus.run_on_headings.heading_inside: "... hold against them
  Warming beaver-human relations Biologist Ann Walsh told ..."); hay keeps
  it, as it does "heading_opening";
- a heading or a timeline's date label run onto the sentence, in the forms
  engine.corpus.hay_check reads from the words
  (hay_check.FUSED_HEADING_FORMS: "June 12 Mayor Ann Walsh opened ...",
  "Ferry unveiled The harbour board has ...", a heading run onto a quoted
  sentence: 'Ferry job for Ann Walsh "When I retire I ...," she said.',
  whose edit would fall in the heading): the needle "sentence" would
  not be one sentence, and the scan moves on to the next; so is one that
  engine.corpus.parsed_headings reads from the parse ("capital_determiner",
  "indefinite_heading", "descriptive_heading", "plural_heading",
  "participle_heading", "place_heading", "abstract_heading": "...
  Progress and scope The council has ...").
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from engine.corpus.cleaning import LOST_CHARACTER, template_hole
from engine.corpus.hay_check import EMBEDDED_POST, dropped_head, embedded_post_lines, fused_heading_form, split_at_abbreviation
from engine.corpus.interviews import live_entry, speech_refusals
from engine.corpus.lost_words import lost_word
from engine.corpus.page_rows import WEB_RESIDUE, row_kind
from engine.corpus.run_on_headings import heading_inside, heading_opening, headline_before_subject, opener_after_word
from engine.needles.quotation import DOUBLE_MARKS, PARAGRAPH, attribution_tail, inside_after, quotation_marks

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

_SENTENCE_END = re.compile(r"[.!?\u2026](?:\s*[\"'\u201d\u2019)\]])*$")
_LIST_ENTRY = re.compile(r"^(?:[-\u2013\u2022*\u00b7]|\(?\d{1,2}[.)]|\(?[a-z][.)])\s")
_LABEL = re.compile(r"^[A-Z][A-Z ]{2,}[A-Z](?::|\s[-\u2013\u2014])")
# one to three capitalised words and a colon before a capital: a list entry's
# label or a kicker ("Railways: The new law ...", "Opinion: ...")
_TITLE_LABEL = re.compile(r"^(?:[A-Z][\w'\u2019-]*\s){0,2}[A-Z][\w'\u2019-]*:\s+[\"\u201c]?[A-Z]")
# a timeline or schedule entry's label: a date or a short verbless phrase, then a
# colon before a capital or a figure ("January 26: Spicer says ...", "Jan. 15: ...",
# "March 3, 2017: ...", "Short time later: Drives from ...")
_ENTRY_LABEL = re.compile(r"^([A-Z0-9][^:!?;\"\u201c\u201d()]{0,40}?):\s+[\"\u201c]?[A-Z0-9]")
_MONTH = (
    r"(?:Jan(?:uary|\.)?|Feb(?:ruary|\.)?|Mar(?:ch|\.)?|Apr(?:il|\.)?|May|June?|July?|Aug(?:ust|\.)?"
    r"|Sep(?:tember|t\.|\.)?|Oct(?:ober|\.)?|Nov(?:ember|\.)?|Dec(?:ember|\.)?)"
)
_DATE = re.compile(
    r"(?:(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day,?\s+)?"
    rf"(?:{_MONTH}(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?(?:,?\s+\d{{4}})?|\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}(?:,?\s+\d{{4}})?|\d{{4}})"
)
ENTRY_LABEL_WORDS = 4
# a legend or a cross-reference to a part of the page that is not in the text:
# typography ("The winner is displayed in bold."), "See ... section below"
_LEGEND = re.compile(
    r"\b(?:in|as)\s+(?:bold|boldface|italics?)\b|^See\b.*\b(?:below|above|section|article|chapter)\b", re.IGNORECASE
)
# the longest quotation, in tokens, read as nested in an open one written with the same marks ("skinny")
MAX_NESTED_TOKENS = 6
# a word's sentence end, then stray marks and the next sentence's capital, no space between
_GLUED_END = re.compile(r"[a-z]{2}[.!?][*#~_|\-\u2013\u2014]+[A-Z]")
# a table entry's figure: thousands separators after a spaced dash or colon, then the next entry's capital
_TABLE_ENTRY = re.compile(r"\s[-\u2013\u2014:]\s\$?\d{1,3}(?:,\d{3})+\s+[A-Z]")
TABLE_ENTRIES = 2


def not_a_sentence(span: Span, text: str) -> str | None:
    """Why `span` (whose text without surrounding whitespace is `text`) is not a sentence, or None."""
    if not _SENTENCE_END.search(text):
        return "no_sentence_end"
    if _LIST_ENTRY.match(text):
        return "list_entry"
    if _LABEL.match(text) or _TITLE_LABEL.match(text) or _entry_label(span, text):
        return "label"
    if WEB_RESIDUE.search(text):
        return "web_residue"
    if _LEGEND.search(text):
        return "legend"
    if template_hole(text) is not None:
        return "template_hole"
    row = row_kind(text) or live_entry(text)
    if row is not None:
        return row
    first = next((t for t in span if not (t.is_punct or t.is_space)), None)
    if first is None or (first.is_lower and first.is_alpha):
        return "fragment"
    if span.doc.has_annotation("MORPH") and not _has_finite_verb(span):
        return "no_finite_verb"
    if span.doc.has_annotation("DEP") and opener_after_word(span) is not None:
        return "run_on_heading"
    if span.doc.has_annotation("TAG") and _list_lead_in(span):
        return "list_lead_in"
    if span.doc.has_annotation("TAG") and lost_word(span) is not None:
        return "missing_word"
    if span.doc.has_annotation("DEP") and _subordinate_clause_only(span):
        return "subordinate_clause"
    return None


_SUBORDINATORS = frozenset({"if", "because", "although", "though", "unless", "whereas", "whether"})


def _subordinate_clause_only(span: Span) -> bool:
    """A "sentence" that is only a subordinate clause ("As has been the case
    for years.", "If to this sum be added the loans, to $4,000."): it opens
    (after an adverb or a conjunction) with a subordinator ("if", "because",
    "as", ...) the parser hangs on the root, and no verb follows the root's
    clause (after its first comma, if any) but one of another subordinate
    clause. A main clause after the comma ("Although it rained, the crew
    stayed.") is a verb there, however the parser attached it."""
    root = span.root
    words = [t for t in span if not (t.is_punct or t.is_space)]
    lead = 0
    while lead < len(words) - 1 and words[lead].dep_ in ("advmod", "cc") and words[lead].head.i == root.i:
        lead += 1
    if not words or words[lead].dep_ != "mark" or words[lead].head.i != root.i:
        return False
    mark = words[lead]
    # a subordinator that is never a preposition, or "as" right before a verb ("As has been ..."): the parser also
    # reads "After the storm Maeve sailed" as a clause under "after"
    after_mark = span.doc[mark.i + 1] if mark.i + 1 < span.end else mark
    if mark.lower_ not in _SUBORDINATORS and not (mark.lower_ == "as" and after_mark.pos_ in ("VERB", "AUX")):
        return False
    comma = next((t.i for t in span if t.text == "," and t.i > root.i), root.i)
    return not any(t.pos_ in ("VERB", "AUX") and not _marked(t) for t in span if t.i > comma)


def _marked(verb: Token) -> bool:
    """Whether `verb` heads a subordinate clause (one with a subordinator, or a relative clause), or is the
    auxiliary of one."""
    head = verb.head if verb.dep_ in ("aux", "auxpass") else verb
    return head.dep_ == "relcl" or any(child.dep_ == "mark" for child in head.children)


def _list_lead_in(span: Span) -> bool:
    """A colon right after a preposition or a conjunction ("with measures
    including:", "such as:", "... to talk to, but:"), then a capitalised word: a list's lead-in run into its first
    bulleted item, whose own sentence follows ("... including: So-called
    starter homes will be ..."). Prose puts a preposition's object after
    it, not a colon. After "include" in any form ("including:", "Other
    findings include:") the next word may be lowercase too: the verb takes
    its object straight after it, so the colon marks bullets flattened into
    the line ("... including: energy drinks (68% had), pain-relief gels
    (60%), ...", issue 27, read 5941), where a preposition before a colon
    may end a clause ("what they asked for: nothing")."""
    words = [t for t in span if not t.is_space]
    for k in range(1, len(words) - 1):
        before, after = words[k - 1], words[k + 1]
        if words[k].text != ":":
            continue
        if before.lower_ == "including" or before.lemma_.lower() == "include" and before.pos_ in ("VERB", "AUX"):
            return True
        # a preposition or a conjunction before the colon ("such as:", "but:"): prose puts their object or clause there
        if (before.tag_ in ("IN", "TO", "CC") or before.dep_ == "prep") and after.text[:1].isupper():
            return True
    return False


def _entry_label(span: Span, text: str) -> bool:
    """Whether `text` opens with a list entry's label and a colon: a date
    ("Jan. 15:", "March 3, 2017:", "1998:"), or at most ENTRY_LABEL_WORDS
    words without a verb, a pronoun or a name, by the parse ("Short time
    later:"); a speaker's or a writer's own words before a colon have a verb
    or a person ("He added: ...", "My fellow citizens: ...", "Ann Walsh: ...",
    whose labels the speaker rules read)."""
    match = _ENTRY_LABEL.match(text)
    if match is None:
        return False
    label = match.group(1).strip()
    if _DATE.fullmatch(label):
        return True
    if len(label.split()) > ENTRY_LABEL_WORDS or not span.doc.has_annotation("TAG"):
        return False
    words = [t for t in span if not t.is_space]
    colon = next((n for n, t in enumerate(words) if t.text == ":"), None)
    if colon is None:
        return False
    return not any(t.pos_ in ("VERB", "AUX", "PRON", "PROPN") or t.tag_ == "PRP$" for t in words[:colon])


def _has_finite_verb(span: Span) -> bool:
    if span.doc.has_annotation("DEP") and span.root.pos_ in ("VERB", "AUX"):
        return True  # an imperative ("Expect the president to ...") or a verb the tagger missed
    # a finite verb, or a past form heading a clause the parser hung off a noun
    # ("The construction of the towers aimed at ...": the tagger's VBN)
    return any("Fin" in t.morph.get("VerbForm") or (t.tag_ in ("VBD", "VBN") and t.dep_ not in ("amod", "compound")) for t in span)


def needle_refusals(doc: Doc, spans: Sequence[Span]) -> tuple[str, ...]:
    """For each of `spans` (the document's sentences, in order): "" if it may
    be a needle sentence, else the reason (module docstring)."""
    events = quotation_marks(doc)
    elisions = _unclosed_single_openings(doc, events)
    speech = speech_refusals(doc, spans)  # interview answers, speech after a colon (engine.corpus.interviews)
    posts = embedded_post_lines(doc, spans)
    refusals: list[str] = []
    double = single = False
    nested_at = -1  # where a short quotation inside an open double one opened, with the same marks
    opened_at = -1  # where the open double quotation opened
    starts = [span.start for span in spans]
    e = 0
    for k, span in enumerate(spans):
        while e < len(events) and events[e][0] < span.start:
            i, role = events[e]
            same_marks = bool(DOUBLE_MARKS.intersection(doc[i].text))
            if same_marks and role == "close" and 0 <= nested_at and i - nested_at <= MAX_NESTED_TOKENS:
                nested_at = -1  # '"I cannot support this "skinny" budget.': the outer quotation stays open
            elif e not in elisions:
                # nested only inside an outer quotation opened in the same sentence: a state carried
                # over from earlier sentences may be a misread mark, and would then never close
                own_sentence = opened_at >= starts[max(bisect_right(starts, i) - 1, 0)]
                nested_at = i if same_marks and role == "open" and double and own_sentence else -1
                if same_marks and role == "open" and not double:
                    opened_at = i
                double, single = _state_after(doc, double, single, i, role)
            e += 1
        marks = [(i, role) for i, role in _events_in(events, e, span.end) if role != PARAGRAPH]
        text = span.text  # Span.text joins its tokens anew: once for the three tests on it below
        if double or single or not _quotations_closed_inside(doc, span, marks):
            refusals.append("quoted")
        elif speech[k]:
            refusals.append(speech[k])
        elif span.doc.has_annotation("DEP") and attribution_tail(span):
            refusals.append("attribution_tail")  # '"... the adviser?" | Walsh said, in a reference to Byrne.' (quotation.py)
        elif k in posts:
            refusals.append(EMBEDDED_POST)  # "@ann: ... | The ferry is late! | pic.twitter.com/..." (hay_check)
        elif cut := split_at_abbreviation(spans, k) or dropped_head(doc, spans, k):
            refusals.append(cut)  # "Republican Sens." | "Ann Walsh and ...", "READ MORE:" | "Ferry strike ..." (hay_check)
        elif LOST_CHARACTER in text:
            refusals.append("lost_characters")
        elif _GLUED_END.search(text):
            refusals.append("glued_sentences")
        elif len(_TABLE_ENTRY.findall(text)) >= TABLE_ENTRIES:
            refusals.append("table_entries")
        elif span.doc.has_annotation("DEP") and heading_opening(span):
            refusals.append("heading_opening")
        elif span.doc.has_annotation("DEP") and headline_before_subject(span):
            refusals.append("headline_before_subject")
        elif span.doc.has_annotation("DEP") and heading_inside(span):
            refusals.append("heading_inside")
        elif span.doc.has_annotation("DEP") and (form := fused_heading_form(span)):
            refusals.append(form)
        else:
            refusals.append("")
    return tuple(refusals)


def _unclosed_single_openings(doc: Doc, events: Sequence[tuple[int, str]]) -> set[int]:
    """The events that are single marks opening a quotation no single mark
    closes before the paragraph ends, written on a lowercase word or a
    figure: an elision ("'til", "'90s"), not a quotation, which would
    otherwise hold every later sentence of a one-line document (the sentence
    holding it is still refused as unclear). One on a capital ("'Rogue
    ventures' Knoepfler said", its close read as a possessive) still opens."""
    unclosed: set[int] = set()
    pending: list[int] = []

    def elided(i: int) -> bool:
        word = doc[i + 1].text[:1] if i + 1 < len(doc) and not doc[i].whitespace_ else ""
        return word.islower() or word.isdigit()

    for n, (i, role) in enumerate(events):
        if role == PARAGRAPH:
            unclosed.update(k for k in pending if elided(events[k][0]))
            pending = []
        elif not DOUBLE_MARKS.intersection(doc[i].text):
            if role == "open":
                pending.append(n)
            elif role == "close" and pending:
                pending.pop()  # closes the latest: an earlier unclosed one is still an elision
    unclosed.update(k for k in pending if elided(events[k][0]))
    return unclosed


def _state_after(doc: Doc, double: bool, single: bool, i: int, role: str) -> tuple[bool, bool]:
    """(double, single): whether a double and a single quotation are open
    after the mark at token `i`. A single mark closing a quotation nested
    in a double one leaves the double one open ('"The issue isn't: 'Is
    there a campaign?'' | 'Yes, there is."'); a clear double mark ends any
    single one (a stray apostrophe then lasts only until it)."""
    if role == PARAGRAPH:
        return False, False
    if DOUBLE_MARKS.intersection(doc[i].text):
        return inside_after(double, role), single and role == ""
    return double, inside_after(single, role)


def _quotations_closed_inside(doc: Doc, span: Span, marks: list[tuple[int, str]]) -> bool:
    """Whether the sentence's own quotations are clear and leave it some prose
    of its own: double marks only, opening and closing in turn, the last one
    closing, and the sentence not opening with one ('"...," she said.': all
    that is the writer's is the attribution)."""
    if not marks:
        return True
    first = next((t for t in span if not t.is_space), None)
    if first is None or first.i == marks[0][0]:
        return False
    expected = "open"
    for i, role in marks:
        if role != expected or not DOUBLE_MARKS.intersection(doc[i].text):
            return False
        expected = "close" if expected == "open" else "open"
    return expected == "open"


def _events_in(events: Sequence[tuple[int, str]], e: int, end: int) -> Iterator[tuple[int, str]]:
    while e < len(events) and events[e][0] < end:
        yield events[e]
        e += 1
