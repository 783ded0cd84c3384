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
  ("... held by Brig."), and "after_abbreviation" for the one after it;
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
  unions said ...", "... crisis Gender and age ...").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from engine.corpus.cleaning import ABBREVIATIONS, TITLES
from engine.corpus.fused_headings import name_word
from engine.corpus.run_on_headings import heading_opening
from engine.needles.edits import FINITE_TAGS

if TYPE_CHECKING:
    from collections.abc import Sequence

    from spacy.tokens import Doc, Span

MAX_OPENING_TOKENS = 12
MAX_QUESTION_WORDS = 12
MAX_LABEL_WORDS = 6
MAX_TRAILING_OFF_WORDS = 6
_FIRST_LETTER = re.compile(r"[^\W_]")  # the first letter or digit
_CAPTION = re.compile(r"\((?:pictured|photo|left|right|above|below|cent(?:re|er)|top|bottom|file)\b[^)]*\)")
_OPENING_QUOTES = "\"'\u201c\u2018"
_LABEL = re.compile(r"^([^:!?;.\"\u201c\u201d()]{1,60}?):\s")
_ABBREVIATED_END = re.compile(r"(?:^|[\s(])([A-Za-z]+)\.[\"'\u201d\u2019)]*$")
_FUNCTION_TAGS = frozenset({"IN", "TO", "DT", "PDT", "PRP", "PRP$", "POS", "WDT", "WP", "WP$", "CC", "EX", "MD", "RP"})
_NAME_TYPES = frozenset({"PERSON", "GPE", "ORG", "LOC", "FAC", "NORP", "WORK_OF_ART", "PRODUCT", "EVENT"})
_PAST_TAGS = frozenset({"VBD", "MD"})
_OPENER_TAGS = frozenset({"IN", "CC", "RB", "RBR", "RBS", "WRB"})


def hay_refusals(doc: Doc, spans: Sequence[Span]) -> tuple[str, ...]:
    """For each of `spans` (the document's stored sentences, in order): "" if
    a rand-hay window may hold it, else why not (module docstring)."""
    refusals = [_refusal(span) for span in spans]
    for k in range(1, len(spans)):
        if not refusals[k] and refusals[k - 1] == "abbreviation_end":
            refusals[k] = "after_abbreviation"
    return tuple(refusals)


def _refusal(span: Span) -> str:
    text = span.text.strip()
    first = _FIRST_LETTER.search(text)
    if first is not None and first.group().islower():
        return "lowercase_start"
    if _CAPTION.search(text):
        return "caption"
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
    if span.doc.has_annotation("DEP") and heading_opening(span, hay=True):
        return "heading_opening"
    if _opener_after_name(span):
        return "opener_after_name"
    if span.doc.has_annotation("TAG") and _name_restated(span):
        return "name_restated"
    if span.doc.has_annotation("TAG") and _bare_capital_after_lowercase(span):
        return "capital_after_lowercase"
    return ""


def _abbreviation_end(text: str) -> bool:
    match = _ABBREVIATED_END.search(text)
    if match is None:
        return False
    word = match.group(1)
    return (len(word) == 1 and word.isupper() and word != "I") or word in TITLES or word.lower() in ABBREVIATIONS


def _short_question(text: str) -> bool:
    return text.rstrip("\"'\u201d\u2019)").endswith("?") and not text.startswith(tuple(_OPENING_QUOTES)) and len(text.split()) <= MAX_QUESTION_WORDS


def _label(span: Span, text: str) -> bool:
    match = _LABEL.match(text)
    if match is None or len(match.group(1).split()) > MAX_LABEL_WORDS:
        return False
    end = span.start_char + match.end(1)
    label = [t for t in span if t.idx < end]
    return label[0].tag_ in ("WRB", "WP") or not any(t.tag_ in FINITE_TAGS for t in label)


def _opener_after_name(span: Span) -> bool:
    """A word that opens clauses (a preposition, a conjunction, an adverb)
    capitalised right after a name, inside the sentence ("... grew up in
    Dublin For all her ..."): engine.corpus.fused_headings splits there
    only when no title-case word follows (a title of a work: "Gone With
    the Wind"); here the title goes with it."""
    words = [t for t in span if not t.is_space]
    for k in range(1, len(words) - 1):
        token, before = words[k], words[k - 1]
        if not (token.is_title and token.is_alpha and len(token.text) > 1 and before.whitespace_ and name_word(before)):
            continue
        adverb = token.lower_.endswith("ly") and len(token.text) > 4 and words[k + 1].text == "," and token.ent_type_ not in _NAME_TYPES
        if token.tag_ in _OPENER_TAGS or adverb:
            return True
    return False


def _name_restated(span: Span) -> bool:
    """A heading that names what the sentence after it opens with: within the
    first MAX_OPENING_TOKENS words, with no punctuation or conjunction
    before it, a capitalised word that the words before it already hold,
    after a word that is neither a verb nor a function word ("The harbour
    levy Levy ...", "Carmaker Acme reports record sales in May Acme Group
    said ...")."""
    words = [t for t in span if not t.is_space]
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


def _bare_capital_after_lowercase(span: Span) -> bool:
    """A capitalised word that is not a name to the parser (no entity), right
    after a lowercase common noun and before a lowercase word that is not a
    verb ("... lowers by 4.5 percent Trade volumes between ..."): the first
    word of a sentence run onto a headline. engine.corpus.sentence_gate drops
    the forms tagged as openers (run_on_headings.opener_after_word); the
    tagger's proper nouns are left to this."""
    words = [t for t in span if not t.is_space]
    for k in range(1, len(words) - 1):
        token, before, after = words[k], words[k - 1], words[k + 1]
        if not (token.is_title and token.is_alpha and len(token.text) > 1 and token.text != "I" and not token.ent_type_):
            continue
        if not (before.whitespace_ and before.is_lower and before.is_alpha and before.tag_ in ("NN", "NNS") and not before.is_stop):
            continue
        if after.is_lower and after.is_alpha and not after.tag_.startswith("VB") and (after.tag_ == "CC" or after.tag_ not in _FUNCTION_TAGS):
            return True
    return False
