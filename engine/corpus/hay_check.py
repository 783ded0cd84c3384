"""Which stored sentences a rand-hay window may hold: a stricter test than the gate's.

engine.corpus.sentence_gate drops what is plainly not a sentence, and its
doubtful cases (a heading that may be run into a sentence) only refuse a
needle, because dropping them from the document would lose prose. Rand hay
is different: it is any window of another document, and no window is owed
a place in it, so engine.corpus.pairs refuses a whole donor window that
holds one doubtful sentence and takes another window. Refusing too much here
costs almost nothing (there are many donors and offsets); keeping a heading
costs a defective window. So these tests read the over-refusing forms.

`hay_refusals(doc, spans)`: for each stored sentence, "" or why no rand-hay
window may hold it (stored sentences have already passed the gate: a
sentence end, a finite verb, no list mark):

- "lowercase_start": its first letter is lowercase (a piece of a sentence,
  also after a quotation mark: '"they gonna ...');
- "caption": a parenthesised picture mark ("(pictured above)", "(top half
  of picture)" is not taken, "(left)", "(file)");
- "trailing_off": at most MAX_TRAILING_OFF_WORDS words ending in an ellipsis
  ("You may also like ...");
- "abbreviation_end": it ends in a title, an initial or an abbreviation
  ("... held by Brig."), and "after_abbreviation" for the one after it,
  also where the gate dropped the piece that ends in it ("Republican Sens."
  | "Ann Walsh and Tom Byrne said ...": `dropped_head`);
- "unbalanced_brackets": brackets opened and not closed or the reverse (a
  split inside brackets);
- "no_finite_verb": no finite verb by the tagger or the morphology: a list
  entry opened by a gerund ("Working with governments to ..."), a call to
  act ("Click here to ...", "Sign up for ..."), a caption or a note; the
  gate keeps such a sentence when its root is a verb (an imperative), and
  hay refuses imperatives with them;
- "short_question": a question of at most MAX_QUESTION_WORDS words that does
  not open with a quotation mark (an explainer's subheading standing alone:
  "What is a state visit?"; a speech's rhetorical question goes with it);
- "label": at most MAX_LABEL_WORDS words before a colon, without a finite
  verb or opened by a wh-word ("Why it matters: ...", "How the levy works:
  ..."); the gate drops the forms it is sure of;
- "heading_opening": engine.corpus.run_on_headings.heading_opening, which the
  gate only lets refuse needles, in its over-refusing form (`hay=True`: a
  heading ending in a plural noun the parser hung on the name, or holding a
  verb in the present, as headlines do);
- "opener_after_name": a preposition, conjunction or adverb capitalised
  right after a name ("... grew up in Kinsale For all her years ..."), also
  before a title-case word, where engine.corpus.fused_headings abstains (a
  title of a work goes with it), and a capitalised "-ly" word before a comma
  the tagger calls a name ("Going to the FBI Eventually, ...");
- "name_restated": a headline naming what the item opens with ("Carmaker
  Acme reports record sales in May Acme Group said ..."): in the first
  MAX_OPENING_TOKENS words, no punctuation, conjunction or past tense
  before, a name the words before already hold, after a word that is not a
  verb or a function word;
- "capital_after_lowercase": a capitalised word that is no entity, after a
  lowercase common noun and before a lowercase word that is not a verb or
  a function word other than a conjunction ("... rose by 4 percent Trade
  unions said ...", "... crisis Gender and age ...");
- "quoted_headline": a phrase in quotation marks with no stop of its own,
  opening the sentence or in single marks inside it, run into a capitalised
  word ("'Harbour in doubt' Ann Walsh said ...", "Cork 'will not wait'
  Outside the hall ..."), or a sentence wholly in single marks of at most
  MAX_QUESTION_WORDS words (a headline's quotation: news prose quotes in
  double marks), or one to three capitalised words and a phrase in single
  marks before a lowercase word, opening the sentence ("Cobh 'safest
  harbour' for ferries Ann Walsh ...": a headline);
- "imperative": it opens with a verb in the base form, not after a
  quotation mark (a call to act: "Sign up for our newsletter", a heading
  "Wait and see Acme said ..."); a speech's exhortation goes with it;
- "date_label": it opens with a date ("March 21", "Monday") run into a
  capitalised word with no punctuation between (a timeline's entry);
- "capital_mid_sentence": a capitalised word that is no name to the tagger
  (nor a month or a day), after a lowercase content word, a number or a
  name, before a lowercase word or a comma ("... in August 2016 Fiscal
  discipline?", "... on March 15 She noted ...", "... Germany Big firms
  are ...", "... remains calm Calm is ..."): a word prose capitalises only
  where a sentence starts;
- "name_repeated": a name said twice in a row ("... courts the Walshes
  Walsh's ...", "... comes to Cobh Cobh, a port ..."), or the name the sentence opens with said again after a
  content word within MAX_OPENING_TOKENS words ("Walsh says pier vital to
  growing Ann Walsh, the mayor, ...");
- "wh_heading": it opens with a wh-word, is no question, and a capitalised
  word follows a lowercase content word within MAX_OPENING_TOKENS words
  ("Why ferries matter here Captain Ann Walsh said ...");
- "caption_present": at most MAX_CAPTION_WORDS words, its main verb in the
  present with no clause under it, ending in a place after a preposition
  ("Ann Walsh stands outside her home in Cobh."): a picture's caption;
- "bracket_start": it opens with a bracket holding a number, closed before
  a comma ("[$5,000], but I refused."): the rest of a sentence cut before
  an editor's conversion;
- "attribution_alone": at most MAX_ATTRIBUTION_WORDS words, a name and a
  verb of saying with nothing said and no quotation mark ("Walsh said."):
  an attribution cut from its quotation;
- "root_not_finite": the main verb is a gerund with a subject and no
  auxiliary ("One of them being the old pier - or the quay as it is
  called."): a fragment, though a clause under it has a finite verb;
- "determiner_mid_sentence": "The", "A" or "An" capitalised after a
  lowercase participle, particle or plural noun (no verb of saying) with no
  punctuation between,
  before no name, opening the subject of a verb ("... ferry unveiled The
  harbour board has ..."): a heading run into the sentence after it;
- "quote_fused": a double quotation mark opened right after a lowercase
  word, before a capitalised word, and not closed in the sentence ("... in
  the winter "This is a willow forest."): a caption or heading run into a
  quotation;
- "noun_phrase_entry": its root is a noun with no subject, copula or
  clause of its own ("The old pier at Kinsale, which the board rebuilt in
  1890."): a list entry or a caption, the finite verb only in a clause
  that describes the noun;
- "subheading_says": a subheading "<what was said>, <who> says" run onto
  the sentence after it, which opens with a person's full name and a comma
  ("Fares too high, ferry user says Ann Walsh, a nurse, told ...");
- "byline_opening": "By", a person's name of two words or more and a comma
  opening the sentence ("By Ann Walsh, harbour correspondent The ...");
- "dateline": a wire dateline anywhere in it, one to three capitalised words
  in brackets, a dash and a capital ("Cork (HNS) -- The ferry ...", "From
  HNS's Ann Walsh Cobh (HNS) -- The board ..."): a dispatch's opening, often
  with the byline of a digest's item run into it; an acronym after its
  name ("the Harbour Board (HB) - a body ...") goes on in lowercase;
- a sentence ending in a name's suffix ("... Thomas Walsh Jr.") is an
  "abbreviation_end" too (a split there leaves a fragment after it);
- "fused_clause": two main clauses, each with its subject and finite verb,
  run together with nothing between (engine.corpus.fused_clauses: a
  caption or a teaser printed without a stop, "... a lifeline for the
  islands Walsh enjoys the backing of the board.");
- "subjectless_clause": a finite clause hung on another without a marker
  and without a subject (engine.corpus.fused_clauses.subjectless_clause: a
  caption run through a figure onto the next sentence, "... into 3,600 Ann
  Walsh of the union is one of ...");
- "telephone_number": a telephone number (engine.corpus.page_rows
  .telephone_number): a contact line or a call for witnesses
  ("... is asked to call the harbour police on 1800 666 111."), where the
  gate drops only a directory's entry (page_rows' "contact_listing").
- last, the headings engine.corpus.parsed_headings reads from the parse
  ("capital_determiner", "indefinite_heading", "descriptive_heading",
  "plural_heading", "participle_heading", "place_heading",
  "abstract_heading": "... Progress and scope The council has ...").

Then, for sentences with no refusal above, the quotation state around them
(engine.needles.quotation): "quote_continues" (it starts inside a
quotation opened before it), "quote_left_open" (a quotation is still open
after it), "quote_inside" (both). These hold only at a window's edge
(`edge_refused`): a window may hold a quotation of several sentences, but
may not cut one, which would leave a closing mark without its opening, or
the reverse.
"verbless_quote_after_dropped" holds anywhere: the gate dropped a span
right before the sentence, inside the quotation the sentence continues, and
the sentence's quoted words (up to the mark that closes them) hold no verb:
the last item of a spoken list whose other items, verbless lines, the gate
dropped ('"Fares. Timetables. The future of the islands," said Walsh ...'),
left as a fragment. A whole sentence after such a gap ('... The board
must act," said Walsh.') reads as prose and keeps its edge refusal.

`dropped_head` reads the piece the gate dropped right before a sentence, in
its paragraph, for a sign that it was the sentence's own head (it holds
anywhere in a window, and engine.corpus.sentence_gate refuses such a
sentence as a needle too):

- "after_abbreviation": the piece ends in a title or an abbreviation (above);
- "after_dropped_label": the piece ends in a colon ("READ MORE:",
  "OPINION:", "... what they had long talked about doing:", "Ann Walsh:"):
  what follows a label is its teaser's headline run into the next sentence
  ("READ MORE:" | "Ferry strike called off in Cork Ann Walsh, 30, said
  ..."), the rest of a sentence split at its colon, a list or timeline
  entry, or an interview's answer; no stored sentence ends in a colon, so
  the gate always drops the head;
- "after_dropped_title": the piece has no sentence end and ends in a
  lowercase noun of a person (a role: "owner", "spokesman",
  name_kind_nouns.PERSON_FIRST_NOUNS, the last part of a hyphenated word),
  and the sentence opens with a capitalised conjunction before a proper
  noun: a name whose first word reads as a conjunction, cut from the role
  set before it ("Shop co-owner" | "And Byrne told the paper ..."). A
  heading before a sentence that opens with "But" or "And" ("Fares rise" |
  "But the board ...") has no name after the conjunction.

`embedded_post_lines`: the gate dropped web residue (a handle, a link)
right before and right after a short run of sentences (a post's length), so
the run is the lines of an embedded post whose first line carried the handle
and whose last the link ("@ann:" | "Ferry cancelled again. The crews wait!" |
"pic.twitter.com/..."), not the writer's prose ("embedded_post"; a needle
refusal too).

Last, engine.corpus.continuations.continuation_refusals: a sentence opening
with an ellipsis or a bracketed insertion that continues a cut clause
("continuation_start"), one right after a span the gate dropped that starts
inside a quotation ("after_dropped_in_quote"), and both halves of a
sentence split at an ellipsis written against the next word
("ellipsis_split"); these replace a quotation's edge refusals and hold
anywhere in a window.

The capitalised-article form ("determiner_mid_sentence") also takes a
headline ending in a verb in the present, a noun or an adjective ("Budget
talks resume The minister said ..."), not a verb of saying.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from engine.corpus.cleaning import ABBREVIATIONS, LOST_CHARACTER, NAME_SUFFIXES, TITLES, has_word
from engine.corpus.continuations import continuation_refusals
from engine.corpus.fused_clauses import fused_clause, subjectless_clause
from engine.corpus.page_rows import WEB_RESIDUE, telephone_number
from engine.corpus.fused_headings import name_word
from engine.needles.name_kind_nouns import PERSON_FIRST_NOUNS
from engine.corpus.parsed_headings import HEADING_KINDS, fused_heading_kind
from engine.corpus.run_on_headings import heading_opening
from engine.needles.edits import FINITE_TAGS
from engine.needles.quotation import quotation_marks, quotation_open_at

if TYPE_CHECKING:
    from collections.abc import Sequence

    from spacy.tokens import Doc, Span, Token

MAX_OPENING_TOKENS = 12
MAX_QUESTION_WORDS = 12
MAX_LABEL_WORDS = 6
MAX_TRAILING_OFF_WORDS = 6
MAX_CAPTION_WORDS = 14
MAX_ATTRIBUTION_WORDS = 3
_SAYING_LEMMAS = frozenset({"say", "tell", "add", "write", "explain", "note", "insist", "recall", "ask", "reply", "respond", "continue"})
_BRACKET_START = re.compile(r"^[\[(][^\])]{0,20}\d[^\])]{0,20}[\])]\s*,")
# "(CNN) --", "(Reuters) -": a wire dateline's outlet, then a dash and the sentence's capital
_DATELINE = re.compile(r"\([A-Z][\w.&]*(?: [A-Z][\w.&]*){0,2}\)\s*(?:--|-|\u2013|\u2014)\s*[\"\u201c]?[A-Z]")
_QUOTE_FUSED = re.compile(r"[a-z] [\"\u201c](?!I )[A-Z]")
_ARTICLES = frozenset({"The", "A", "An"})
# what a headline ends in before the capitalised article of the sentence run onto it: a participle, a
# particle, a noun, an adjective, or a verb in the present ("Budget talks resume The minister said ...")
_HEADING_END_TAGS = frozenset({"VBN", "VBD", "VBP", "VBZ", "VB", "NNS", "NN", "JJ", "RP"})
_QUOTED_OPENING = re.compile(r"^([\"'\u201c\u2018])([^\"'\u201c\u201d\u2018\u2019]{2,80}?)[\"'\u201d\u2019]\s+[\"\u201c]?[A-Z]")
_SINGLE_QUOTED_INSIDE = re.compile(r"\s\u2018?'?(?<=[\s\u2018'])['\u2018][^'\u2018\u2019\"]{2,80}?[^\s.,!?;:]['\u2019]\s+[A-Z]")
# a headline's opening: a name, then a phrase in single marks ("Cobh 'safest harbour' for ferries The ...")
_NAME_SINGLE_QUOTED = re.compile(r"^(?:[A-Z][\w-]*\s){1,3}['\u2018][^'\u2018\u2019\"]{2,60}[^\s.,!?;:]['\u2019]\s+[a-z]")
_SINGLE_QUOTED_WHOLE = re.compile(r"^['\u2018]\w[^\"\u201c\u201d]*[^\s\"\u201c\u201d]['\u2019]$")
_CALENDAR = frozenset(
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday".split()
)
_WH_WORDS = frozenset({"why", "how", "what", "where", "when", "who", "which"})
_PLACE_TYPES = frozenset({"GPE", "LOC", "FAC"})
_REFUSALS_KEY = "needlejudge_hay_refusals"
_FIRST_LETTER = re.compile(r"[^\W_]")  # the first letter or digit
_CAPTION = re.compile(r"\((?:pictured|photo|left|right|above|below|cent(?:re|er)|top|bottom|file)\b[^)]*\)")
_OPENING_QUOTES = "\"'\u201c\u2018"
_LABEL = re.compile(r"^([^:!?;.\"\u201c\u201d()]{1,60}?):\s")
_ABBREVIATED_END = re.compile(r"(?:^|[\s(])([A-Za-z]+)\.[\"'\u201d\u2019)]*$")
_FUNCTION_TAGS = frozenset({"IN", "TO", "DT", "PDT", "PRP", "PRP$", "POS", "WDT", "WP", "WP$", "CC", "EX", "MD", "RP"})
_NAME_TYPES = frozenset({"PERSON", "GPE", "ORG", "LOC", "FAC", "NORP", "WORK_OF_ART", "PRODUCT", "EVENT"})
_PAST_TAGS = frozenset({"VBD", "MD"})
_OPENER_TAGS = frozenset({"IN", "CC", "RB", "RBR", "RBS", "WRB", "DT", "PDT"})


QUOTE_CONTINUES = "quote_continues"
QUOTE_LEFT_OPEN = "quote_left_open"
QUOTE_INSIDE = "quote_inside"
VERBLESS_QUOTE_AFTER_DROPPED = "verbless_quote_after_dropped"
# refusals that hold only at a window's edge: the first sentence of a window may not start inside
# a quotation, nor may the last leave one open (engine.corpus.pairs.clean_center)
QUOTE_EDGES = {QUOTE_CONTINUES: "first", QUOTE_LEFT_OPEN: "last", QUOTE_INSIDE: "both"}


def hay_refusals(doc: Doc, spans: Sequence[Span]) -> tuple[str, ...]:
    """For each of `spans` (the document's stored sentences, in order): "" if
    a rand-hay window may hold it, else why not (module docstring)."""
    refusals = [_refusal(span) for span in spans]
    posts = embedded_post_lines(doc, spans)
    for k in range(len(spans)):
        if not refusals[k]:
            refusals[k] = AFTER_ABBREVIATION if k and refusals[k - 1] == "abbreviation_end" else dropped_head(doc, spans, k)
        if not refusals[k] and k in posts:
            refusals[k] = EMBEDDED_POST
    for k, span in enumerate(spans):
        if refusals[k]:
            continue
        continues = bool(quotation_open_at(doc, span.start))
        left_open = span.end < len(doc) and bool(quotation_open_at(doc, span.end))
        if continues or left_open:
            refusals[k] = QUOTE_INSIDE if continues and left_open else QUOTE_CONTINUES if continues else QUOTE_LEFT_OPEN
    # a piece continuing one cut off or dropped before it (engine.corpus.continuations): refused anywhere
    for k, why in continuation_refusals(doc, spans).items():
        if not refusals[k] or refusals[k] in QUOTE_EDGES:
            refusals[k] = why
    for k, why in enumerate(refusals):
        if QUOTE_EDGES.get(why) in ("first", "both") and _verbless_quote_after_dropped(doc, spans, k):
            refusals[k] = VERBLESS_QUOTE_AFTER_DROPPED
    return tuple(refusals)


def _verbless_quote_after_dropped(doc: Doc, spans: Sequence[Span], k: int) -> bool:
    """Whether the gate dropped a span right before sentence `k` (which
    starts inside a quotation) and its words up to the mark closing that
    quotation hold no verb: a fragment whose other parts were dropped."""
    if not has_word(doc[spans[k - 1].end if k else 0 : spans[k].start].text):
        return False
    span = spans[k]
    close = next((i for i, role in quotation_marks(doc) if span.start <= i < span.end and role == "close"), span.end)
    return not any(t.pos_ in ("VERB", "AUX") for t in doc[span.start : close])


AFTER_ABBREVIATION = "after_abbreviation"
EMBEDDED_POST = "embedded_post"
AFTER_DROPPED_LABEL = "after_dropped_label"
AFTER_DROPPED_TITLE = "after_dropped_title"


def dropped_head(doc: Doc, spans: Sequence[Span], k: int) -> str:
    """Why the piece the gate dropped right before sentence `k`, in its
    paragraph, was the sentence's own head (module docstring), or ""."""
    piece = _dropped_piece(doc, spans[k - 1].end if k else 0, spans[k].start)
    if not piece:
        return ""
    if _abbreviation_end(doc[piece[0].i : piece[-1].i + 1].text):
        return AFTER_ABBREVIATION
    last = piece[-1]
    if last.text == ":":
        return AFTER_DROPPED_LABEL
    words = _words(spans[k])
    if (
        last.is_lower and last.text.split("-")[-1] in PERSON_FIRST_NOUNS
        and len(words) > 1 and words[0].tag_ == "CC" and words[0].is_title and words[1].tag_ in ("NNP", "NNPS")
    ):  # fmt: skip
        return AFTER_DROPPED_TITLE
    return ""


# the longest post the rule reads as one (a post on X holds at most 280 characters)
MAX_POST_CHARS = 280


def embedded_post_lines(doc: Doc, spans: Sequence[Span]) -> set[int]:
    """The indices of the sentences that are lines of an embedded post: a run of stored sentences, nothing dropped
    between them and together no longer than a post (MAX_POST_CHARS), where the gate dropped web residue (a link, a
    handle: engine.corpus.page_rows.WEB_RESIDUE) right before the run and right after it. The post's first line
    carried the handle and its last the link ("@ann: | Ferry cancelled again. The crews wait! | pic.twitter.com/x"):
    the run is the post's words, not the writer's prose. On 17,637 distinct tuning sentences the single-sentence
    form refused 4, all lines of posts."""
    gaps = [doc[spans[k - 1].end if k else 0 : spans[k].start].text for k in range(len(spans))]
    gaps.append(doc[spans[-1].end :].text if spans else "")
    lines: set[int] = set()
    start = 0
    for k in range(len(spans)):
        if has_word(gaps[k]):
            start = k  # a run starts after any dropped words
        run = range(start, k + 1)
        if (
            WEB_RESIDUE.search(gaps[start]) and WEB_RESIDUE.search(gaps[k + 1])
            and sum(len(spans[r].text.strip()) for r in run) <= MAX_POST_CHARS
        ):  # fmt: skip
            lines.update(run)
    return lines


def split_at_abbreviation(spans: Sequence[Span], k: int) -> str:
    """"abbreviation_end" if sentence `k` ends in a title ("Sens."), "after_abbreviation" if the stored sentence
    before it does, else "": the two halves of a sentence split after a title, which never ends one (for the
    needle gate, engine.corpus.sentence_gate). Hay refuses a split after an initial or an abbreviation too
    (hay_refusals); a needle may not: "... under Part A." and "... Plan B." end sentences."""
    if _title_end(spans[k].text.strip()):
        return "abbreviation_end"
    return AFTER_ABBREVIATION if k and _title_end(spans[k - 1].text.strip()) else ""


def _dropped_piece(doc: Doc, start: int, end: int) -> list[Token]:
    """The tokens but spaces of what lies between tokens start and end since the last line break: the piece the
    gate dropped right before a sentence, in its paragraph ([] if none)."""
    piece: list[Token] = []
    for token in doc[start:end]:
        if token.is_space:
            if "\n" in token.text:
                piece = []
        else:
            piece.append(token)
    return piece


# the refusals that read a heading, a caption or a timeline's label run onto the sentence after it, from the
# words (engine.corpus.sentence_gate refuses such a sentence as a needle too: it is not one sentence)
FUSED_HEADING_FORMS = frozenset(
    {
        "date_label", "determiner_mid_sentence", "name_restated", "name_repeated", "wh_heading", "byline_opening", "fused_clause",
        "quote_after_heading",
    }
)


def fused_heading_form(span: Span) -> str:
    """The refusal of `span` if it is one of FUSED_HEADING_FORMS or a heading
    engine.corpus.parsed_headings reads from the parse, else "". _refusal
    reads the parsed headings last, so only an earlier refusal can hide one:
    just then are they read again."""
    why = _refusal(span)
    if why in FUSED_HEADING_FORMS or why in HEADING_KINDS:
        return why
    return fused_heading_kind(span) if why and span.doc.has_annotation("DEP") else ""


def edge_refused(why: str, place: str) -> bool:
    """Whether a sentence refused for `why` may not stand at `place` of a
    window ("first", "last" or "inner"): a quotation's refusals hold at an
    edge only, the others everywhere."""
    edge = QUOTE_EDGES.get(why)
    if edge is None:
        return bool(why)
    return place != "inner" and edge in (place, "both")


def _refusal(span: Span) -> str:
    """`_sentence_refusal` of `span`, read once per span of a Doc: the needle
    gate (fused_heading_form) and hay_refusals both ask it of the same
    stored sentences."""
    known = span.doc.user_data.setdefault(_REFUSALS_KEY, {})
    at = f"{span.start}:{span.end}"  # a str key: user_data survives Doc.to_bytes
    if at not in known:
        known[at] = _sentence_refusal(span)
    return known[at]


def _sentence_refusal(span: Span) -> str:
    text = span.text.strip()
    first = _FIRST_LETTER.search(text)
    if first is not None and first.group().islower():
        return "lowercase_start"
    if _CAPTION.search(text):
        return "caption"
    if LOST_CHARACTER in text:
        return "lost_characters"
    if span.doc.has_annotation("ENT_IOB") and _byline_opening(span):
        return "byline_opening"
    if _DATELINE.search(text):
        return "dateline"
    if text.endswith(("...", "\u2026")) and len(text.split()) <= MAX_TRAILING_OFF_WORDS:
        return "trailing_off"
    if _abbreviation_end(text):
        return "abbreviation_end"
    if text.count("(") != text.count(")") or text.count("[") != text.count("]"):
        return "unbalanced_brackets"
    if span.doc.has_annotation("MORPH") and not any(t.tag_ in FINITE_TAGS or "Fin" in t.morph.get("VerbForm") for t in span):
        return "no_finite_verb"
    if _short_question(text):
        return "short_question"
    if _label(span, text):
        return "label"
    words = _words(span)  # the sentence's tokens but spaces, shared by the token rules below
    if span.doc.has_annotation("DEP") and heading_opening(span, hay=True):
        return "heading_opening"
    if _opener_after_name(span, words):
        return "opener_after_name"
    if span.doc.has_annotation("TAG") and _name_restated(span, words):
        return "name_restated"
    if span.doc.has_annotation("TAG") and _bare_capital_after_lowercase(span, words):
        return "capital_after_lowercase"
    if _quoted_headline(text):
        return "quoted_headline"
    if not span.doc.has_annotation("TAG"):
        return ""
    if _imperative(span, text, words):
        return "imperative"
    if _date_label(span, words):
        return "date_label"
    if _capital_mid_sentence(span, words):
        return "capital_mid_sentence"
    if _name_repeated(span, words):
        return "name_repeated"
    if _wh_heading(span, text, words):
        return "wh_heading"
    if span.doc.has_annotation("DEP") and _caption_present(span, words):
        return "caption_present"
    if _bracket_start(text):
        return "bracket_start"
    if span.doc.has_annotation("DEP") and _attribution_alone(span, words):
        return "attribution_alone"
    if span.doc.has_annotation("DEP") and _root_not_finite(span):
        return "root_not_finite"
    if span.doc.has_annotation("DEP") and _determiner_mid_sentence(span, words):
        return "determiner_mid_sentence"
    if _quote_fused(text):
        return "quote_fused"
    if span.doc.has_annotation("DEP") and span.doc.has_annotation("ENT_IOB") and _subheading_says(words):
        return "subheading_says"
    if span.doc.has_annotation("DEP") and _noun_phrase_entry(span):
        return "noun_phrase_entry"
    if _gerund_after_subject(span):
        return "gerund_fragment"
    if _quote_after_heading(span):
        return "quote_after_heading"
    if span.doc.has_annotation("DEP") and fused_clause(span) is not None:
        return "fused_clause"
    if span.doc.has_annotation("DEP") and subjectless_clause(span) is not None:
        return "subjectless_clause"
    if telephone_number(text):
        return "telephone_number"
    if span.doc.has_annotation("DEP"):
        return fused_heading_kind(span)  # engine.corpus.parsed_headings
    return ""


def _byline_opening(span: Span) -> bool:
    """"By", a person's name and a comma opening the sentence ("By Ann
    Walsh, harbour correspondent The ferry ..."): a byline run onto the
    article's first sentence ("By 2020, ..." and "By Monday, ..." are no
    person's name)."""
    words = _words(span)
    if len(words) < 4 or words[0].text != "By" or words[1].ent_type_ != "PERSON":
        return False
    k = 1
    while k < len(words) and words[k].ent_type_ == "PERSON" and words[k].ent_iob_ != "O" and (k == 1 or words[k].ent_iob_ == "I"):
        k += 1
    return k < len(words) and k >= 3 and words[k].text == ","


def _subheading_says(words: list[Token]) -> bool:
    """A subheading of the form "<what was said>, <who> says" run onto a
    sentence opening with a person's full name and a comma ("Fares too high,
    ferry user says Ann Walsh, a nurse from Cobh, told the board ..."): a
    present "says" whose subject before it is a singular noun without an
    article or a possessive (a headline's "ferry user", where prose writes
    "the harbour master says"), then a name of two words or more, a comma,
    and a finite verb after it whose subject is that name."""
    for k, says in enumerate(words[:-3]):
        subjects = [c for c in says.children if c.dep_ == "nsubj" and c.i < says.i]
        if says.lower_ != "says" or len(subjects) != 1 or subjects[0].tag_ != "NN":
            continue
        if any(c.dep_ in ("det", "poss") for c in subjects[0].children):
            continue
        name = words[k + 1 :]
        length = next((n for n, t in enumerate(name) if t.ent_type_ != "PERSON"), len(name))
        if length < 2 or length >= len(name) or name[length].text != ",":
            continue
        head = name[length - 1]
        if head.dep_ == "nsubj" and head.head.tag_ in FINITE_TAGS | {"VBN", "VBG", "JJ"} and head.head.i > name[length].i:
            return True
    return False


def _gerund_after_subject(span: Span) -> bool:
    """"being" or "having" right after a noun or a pronoun, with no finite
    verb and no punctuation before it ("One of them being the old pier - or
    the quay as it is called."): a fragment of a list or a caption, whatever
    root the parser chose; a participle clause after a comma ("The pier,
    being old, ...") or a preposition ("for being late") is prose."""
    words = _words(span)
    for k in range(1, len(words)):
        token, before = words[k], words[k - 1]
        if token.tag_ in FINITE_TAGS or token.is_punct:
            return False
        if token.lower_ in ("being", "having") and before.tag_ in ("NN", "NNS", "NNP", "NNPS", "PRP", "CD"):
            return True
    return False


MIN_QUOTED_CLAUSE_WORDS = 5


def _quote_after_heading(span: Span) -> bool:
    """A double quotation opened right after a noun, an adjective or a number, with no
    punctuation between and no verb of saying before it, holding
    a clause of at least MIN_QUOTED_CLAUSE_WORDS words with a finite verb
    that ends at its own mark ('... not security in Africa "What came out
    of this report is stark," Ann Walsh told ...'): a heading run onto the
    quotation under it."""
    words = _words(span)
    for k in range(1, len(words) - 1):
        mark, before, first = words[k], words[k - 1], words[k + 1]
        if mark.text not in ('"', "\u201c") or not before.whitespace_ or not first.is_title:
            continue
        # a caption may end in a year ("Workers on strike outside a factory in 2015 "We ...")
        if before.tag_ not in ("NN", "NNS", "NNP", "NNPS", "JJ", "CD") or any(t.lemma_ in _SAYING_LEMMAS for t in words[:k]):
            continue  # "He told the board in Cobh "We will ..."": a colon left out, not a heading
        inside: list[Token] = []
        for token in words[k + 1 :]:
            if token.text in ('"', "\u201d"):
                break
            inside.append(token)
        else:
            continue  # not closed in the sentence: quote_fused's
        if len(inside) >= MIN_QUOTED_CLAUSE_WORDS and inside[-1].text in (",", ".", "!", "?") and any(t.tag_ in FINITE_TAGS for t in inside):
            return True
    return False


def _noun_phrase_entry(span: Span) -> bool:
    """The sentence is a noun phrase: its root a noun with no subject, no
    copula and no clause of its own under it, the finite verb only in a
    clause that describes the noun ("The old pier at Kinsale, which the
    board rebuilt in 1890."): an entry of a list or a caption."""
    root = span.root
    if root.pos_ not in ("NOUN", "PROPN"):
        return False
    return not any(child.dep_ in ("nsubj", "nsubjpass", "cop", "aux", "ccomp", "conj", "parataxis") for child in root.children)


def _abbreviation_end(text: str) -> bool:
    match = _ABBREVIATED_END.search(text)
    if match is None:
        return False
    word = match.group(1)
    return (len(word) == 1 and word.isupper() and word != "I") or word in TITLES or word in NAME_SUFFIXES or word.lower() in ABBREVIATIONS


def _title_end(text: str) -> bool:
    match = _ABBREVIATED_END.search(text)
    return match is not None and match.group(1) in TITLES


def _short_question(text: str) -> bool:
    return text.rstrip("\"'\u201d\u2019)").endswith("?") and not text.startswith(tuple(_OPENING_QUOTES)) and len(text.split()) <= MAX_QUESTION_WORDS


def _label(span: Span, text: str) -> bool:
    match = _LABEL.match(text)
    if match is None or len(match.group(1).split()) > MAX_LABEL_WORDS:
        return False
    end = span.start_char + match.end(1)
    label = [t for t in span if t.idx < end]
    return label[0].tag_ in ("WRB", "WP") or not any(t.tag_ in FINITE_TAGS for t in label)


def _opener_after_name(span: Span, words: list[Token]) -> bool:
    """A word that opens clauses (a preposition, a conjunction, an adverb)
    capitalised right after a name, inside the sentence ("... grew up in
    Dublin For all her ..."): engine.corpus.fused_headings splits there
    only when no title-case word follows (a title of a work: "Gone With
    the Wind"); here the title goes with it."""
    for k in range(1, len(words) - 1):
        token, before = words[k], words[k - 1]
        if not (token.is_title and token.is_alpha and len(token.text) > 1 and before.whitespace_ and name_word(before)):
            continue
        adverb = token.lower_.endswith("ly") and len(token.text) > 4 and words[k + 1].text == "," and token.ent_type_ not in _NAME_TYPES
        if (token.tag_ in _OPENER_TAGS and token.text not in _ARTICLES) or adverb:
            return True  # an article after a name opens a title too often ("Mary Poppins The Musical")
    return False


def _name_restated(span: Span, words: list[Token]) -> bool:
    """A heading that names what the sentence after it opens with: within the
    first MAX_OPENING_TOKENS words, with no punctuation or conjunction
    before it, a capitalised word that the words before it already hold,
    after a word that is neither a verb nor a function word ("The harbour
    levy Levy ...", "Carmaker Acme reports record sales in May Acme Group
    said ...")."""
    for k in range(1, min(len(words) - 1, MAX_OPENING_TOKENS + 1)):
        token, before = words[k], words[k - 1]
        if before.is_punct or before.tag_ in ("CC", "POS"):
            return False
        if before.tag_ in _PAST_TAGS:
            return False  # a headline's verb is in the present or an infinitive; "declined" is prose
        if (
            (token.tag_ in ("NNP", "NNPS") or (token.is_upper and len(token.text) > 1))
            and token.is_alpha
            and not before.tag_.startswith("VB")
            and before.tag_ not in _FUNCTION_TAGS
            and any(t.text == token.text for t in words[: k - 1])
            and not any(t.text == before.text for t in words[: k - 1])  # a name of two words said twice: "Fine Gael ... Fine Gael"
        ):
            return True
    return False


def _bare_capital_after_lowercase(span: Span, words: list[Token]) -> bool:
    """A capitalised word that is not a name to the parser (no entity), right
    after a lowercase common noun and before a lowercase word that is not a
    verb ("... lowers by 4.5 percent Trade volumes between ..."): the first
    word of a sentence run onto a headline. engine.corpus.sentence_gate drops
    the forms tagged as openers (run_on_headings.opener_after_word); the
    tagger's proper nouns are left to this."""
    for k in range(1, len(words) - 1):
        token, before, after = words[k], words[k - 1], words[k + 1]
        if not (token.is_title and token.is_alpha and len(token.text) > 1 and token.text != "I" and not token.ent_type_):
            continue
        if not (before.whitespace_ and before.is_lower and before.is_alpha and before.tag_ in ("NN", "NNS") and not before.is_stop):
            continue
        if after.is_lower and after.is_alpha and not after.tag_.startswith("VB") and (after.tag_ == "CC" or after.tag_ not in _FUNCTION_TAGS):
            return True
    return False


def _quoted_headline(text: str) -> bool:
    """A quotation with no stop of its own run into a capitalised word, at the
    start ("'Harbour in doubt' Ann Walsh said ...") or, in single marks,
    inside ("Cork 'will not wait' Outside ..."); or a short sentence wholly
    in single marks ("'Why don't you pay us?'")."""
    match = _QUOTED_OPENING.match(text)
    if match and match.group(2).rstrip()[-1:] not in ".,!?;:":
        return True
    if _SINGLE_QUOTED_INSIDE.search(text) or _NAME_SINGLE_QUOTED.match(text):
        return True
    return bool(_SINGLE_QUOTED_WHOLE.match(text)) and len(text.split()) <= MAX_QUESTION_WORDS


def _words(span: Span) -> list[Token]:
    return [t for t in span if not t.is_space]


def _imperative(span: Span, text: str, words: list[Token]) -> bool:
    """The sentence opens with a capitalised verb in the base form, with no
    quotation mark before it: a call to act or a heading."""
    if text.startswith(tuple(_OPENING_QUOTES)):
        return False
    if not words or words[0].ent_type_ or words[0].dep_ in ("nsubj", "nsubjpass", "compound", "amod", "npadvmod"):
        return False  # a name, or a noun the parser sees ("Aid workers say ...")
    return words[0].tag_ == "VB" and words[0].is_title and words[0].is_alpha


def _date_label(span: Span, words: list[Token]) -> bool:
    """A date opening the sentence ("March 21", "Monday"), then at once a
    capitalised word: a timeline's label run into its entry."""
    k = 0
    while k < len(words) and words[k].ent_type_ == "DATE" and (words[k].lower_ in _CALENDAR or words[k].like_num):
        k += 1
    if k == 0 or k >= len(words) - 1 or not any(w.lower_ in _CALENDAR for w in words[:k]):
        return False
    nxt = words[k]
    return bool(words[k - 1].whitespace_) and nxt.is_title and nxt.is_alpha and nxt.text != "I"


def _capital_mid_sentence(span: Span, words: list[Token]) -> bool:
    """A capitalised word that is no name (no name entity, not a month or a
    day, not "I"), after a lowercase content word (or a comparative before a
    plural common noun: "... for less Islanders say"), a number or a name, and
    before a lowercase word or a comma: where a sentence or a heading starts
    inside the stored sentence ("... in August 2016 Fiscal discipline?",
    "... on March 15 She noted ...", "... Germany Big firms ...")."""
    for k in range(1, len(words) - 1):
        token, before, after = words[k], words[k - 1], words[k + 1]
        if not (token.is_title and token.is_alpha and len(token.text) > 1 and token.text != "I"):
            continue
        # a plural common noun or the word before said again is no name, whatever the entity tagger
        # says ("in 1890 Fares rose", "remains calm Calm is")
        plain = token.tag_ == "NNS" or token.lower_ == before.lower_
        if not plain and (token.ent_type_ in _NAME_TYPES or token.lower_ in _CALENDAR or token.tag_ in ("NNP", "NNPS") and token.ent_type_ == ""):
            if not (token.tag_ in ("NNP", "NNPS") and token.ent_type_ == "" and before.is_lower and before.tag_ in ("JJ", "NN", "NNS")):
                continue  # a name the tagger sees, unless a plain word before it says a new sentence starts
        if not before.whitespace_:
            continue
        if before.is_lower and (token.tag_ == "JJ" or token.ent_type_ == "NORP"):
            continue  # a proper adjective or a people's name after a plain word ("renowned Western museums")
        lower_content = before.is_lower and before.is_alpha and before.tag_ in ("NN", "NNS", "JJ") and not before.is_stop
        # a comparative ends a phrase too ("More ferries for less Islanders say ..."); a plural common noun is no name
        lower_content = lower_content or (before.is_lower and before.tag_ in ("JJR", "RBR") and token.tag_ == "NNS")
        number = before.like_num and before.tag_ == "CD"
        name = name_word(before) and before.ent_type_ in _NAME_TYPES and token.tag_ not in ("NNP", "NNPS")
        if not (lower_content or number or name):
            continue
        if (after.is_lower and after.is_alpha) or after.text == ",":
            return True
    return False


# a capitalised name word joined by an apostrophe or a hyphen ("O'Brien", "Xi'an"), which name_word (alphabetic) leaves out
_JOINED_NAME = re.compile(r"[A-Z][a-z]*(?:['\u2019-][A-Za-z]+)+")


def _name_repeated(span: Span, words: list[Token]) -> bool:
    """A name said twice in a row ("the Walshes Walsh's", "comes to Xi'an
    Xi'an, the city ..."), or the name the
    sentence opens with said again after a content word within
    MAX_OPENING_TOKENS words ("Walsh says pier vital to growing Ann Walsh,
    ...")."""
    for k in range(1, min(len(words), MAX_OPENING_TOKENS + 1)):
        token, before = words[k], words[k - 1]
        if not before.whitespace_:
            continue
        if token.text == before.text and token.tag_ in ("NNP", "NNPS") and _JOINED_NAME.fullmatch(token.text):
            return True  # a name written with an apostrophe or a hyphen ("to Cill Dara'an Cill Dara'an, ...")
        if not (name_word(token) and name_word(before)):
            continue
        a, b = before.text, token.text
        if a == b or a == b + "s" or a == b + "es" or b == a + "s":
            return True
    first = words[0] if words else None
    if first is None or not name_word(first) or first.ent_type_ not in _NAME_TYPES:
        return False
    for k in range(2, min(len(words), MAX_OPENING_TOKENS + 1)):
        token, before = words[k], words[k - 1]
        if token.text == first.text and before.is_lower and before.is_alpha and before.tag_ not in _FUNCTION_TAGS and before.whitespace_:
            return True
    return False


def _wh_heading(span: Span, text: str, words: list[Token]) -> bool:
    """An explainer's heading opened by a wh-word, no question, run into a
    sentence: a capitalised word after a lowercase content word within
    MAX_OPENING_TOKENS words ("Why ferries matter here Captain Ann Walsh
    said ...")."""
    if not words or words[0].lower_ not in _WH_WORDS or text.rstrip("\"'\u201d\u2019)").endswith("?"):
        return False
    for k in range(2, min(len(words), MAX_OPENING_TOKENS + 1)):
        token, before = words[k], words[k - 1]
        if before.is_punct:
            return False
        if token.is_title and token.is_alpha and token.text != "I" and before.is_lower and before.is_alpha and before.tag_ not in _FUNCTION_TAGS:
            return True
    return False


def _caption_present(span: Span, words: list[Token]) -> bool:
    """A picture's caption: at most MAX_CAPTION_WORDS words, the main verb in
    the present with no clause under it, the last word a place after a
    preposition ("Ann Walsh stands outside her home in Cobh.")."""
    words = [t for t in words if not t.is_punct]
    if not words or len(words) > MAX_CAPTION_WORDS:
        return False
    root = span.root
    if root.tag_ not in ("VBZ", "VBP") or root.lemma_ == "be":
        return False
    if any(child.dep_ in ("ccomp", "xcomp", "advcl", "csubj") and child.tag_.startswith("VB") and child.tag_ != "VB" for child in root.children):
        return False
    last = words[-1]
    place = last.ent_type_ in _PLACE_TYPES or (last.ent_type_ == "ORG" and last.head.lower_ == "in")
    return place and last.head.tag_ == "IN" and last.head.dep_ == "prep"


def _bracket_start(text: str) -> bool:
    """It opens with a bracket closed before a comma or a lowercase word:
    the tail of a sentence cut before an editor's insertion."""
    return bool(_BRACKET_START.match(text))


def _attribution_alone(span: Span, words: list[Token]) -> bool:
    """A few words whose main verb says, with nothing said: an attribution
    cut from its quotation ("Walsh said.")."""
    words = [t for t in words if not t.is_punct]
    root = span.root
    if not words or len(words) > MAX_ATTRIBUTION_WORDS or root.lemma_ not in _SAYING_LEMMAS:
        return False
    if any(t.is_quote for t in span) or words[0].tag_ not in ("NNP", "NNPS"):
        return False  # a quoted reply and its speaker ('"No," she said.') is a sentence
    return not any(child.dep_ in ("ccomp", "dobj", "xcomp", "dative", "prep", "advcl") for child in root.children)


def _root_not_finite(span: Span) -> bool:
    """The main verb is a gerund with a subject and no auxiliary: a
    fragment."""
    root = span.root
    if root.tag_ != "VBG":  # a participle's tag is too often a past tense's (the tagger's VBN for VBD)
        return False
    if any(child.dep_ in ("aux", "auxpass", "nsubjpass", "expl", "cop") for child in root.children):
        return False
    if root.i == span.start:  # a list entry opened by a participle ("Working with ...") is no_finite_verb's
        return False
    if any(t.tag_ in FINITE_TAGS for t in span.doc[span.start : root.i]):
        return False  # a finite verb before it: the parser hung the clause wrongly ("the lawyer says,-adding")
    return any(child.dep_ == "nsubj" for child in root.children)


def _determiner_mid_sentence(span: Span, words: list[Token]) -> bool:
    """A capitalised article after a lowercase word with no punctuation
    between, opening the subject of a verb: the start of a sentence after
    a heading."""
    for k in range(1, len(words) - 1):
        token, before = words[k], words[k - 1]
        if token.text not in _ARTICLES or not before.whitespace_ or not before.is_lower or not before.is_alpha:
            continue
        if before.tag_ not in _HEADING_END_TAGS or before.lemma_ in _SAYING_LEMMAS or words[k + 1].tag_ in ("NNP", "NNPS"):
            continue  # a title or a paper's name ("epic The Myth", "after The Star quoted")
        noun = token.head
        if noun.dep_ in ("nsubj", "nsubjpass") and noun.head.tag_ in FINITE_TAGS | {"VBN", "VBG", "VB"}:
            return True
    return False


def _quote_fused(text: str) -> bool:
    """A double mark opened right after a lowercase word before a capital,
    and not closed in the sentence: a caption or heading run into a
    quotation."""
    match = _QUOTE_FUSED.search(text)
    if not match:
        return False
    rest = text[match.start() + 2 :]
    return rest.count('"') + rest.count("\u201c") + rest.count("\u201d") == 1

