"""The neg needle: negate the main verb of one sentence (a pure function of its parse).

`negate(sentence)` returns the `TextEdit` that negates the sentence's main
clause, or None when the sentence does not admit a clean negation:

- "not" after the first auxiliary of the root ("has worked" -> "has not
  worked", rule neg:aux), after a copula root ("was" -> "was not",
  neg:copula), otherwise do-support agreeing in tense and person
  ("published" -> "did not publish", "works" -> "does not work", neg:do-support).
- Skipped (None):
  * sentences that already hold a negation or a negative word (not, never,
    no, nothing, nobody, none, neither, nor, few, hardly...): negating them
    gives a double negative ("Nothing did not come of this");
  * sentences whose root is not a finite main-clause verb: no verbal root,
    no subject, inversion, an infinitive, a root that carries a subordinator
    ("Because the river flooded the town."), and a past form that the parser
    took as the root although it is a reduced relative ("The security brought
    about by the settlement has led..."): another finite verb follows with
    no subject of its own and no conjunction before it;
  * any edit inside a quotation, including one opened in an earlier sentence
    of the paragraph (`quote_open_before`);
  * a root modified by "also", "too", "as well" or "instead", which read
    oddly under negation ("has not also introduced").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.needles.edits import SUBJECT_DEPS, TextEdit, _inside_quotes, _offset, quote_open_before, sentence_text

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

NEGATION_WORDS = frozenset({"not", "n't", "never", "no"})
# words that make the sentence already negative (or near-negative): one more
# "not" would be a double negative
NEGATIVE_WORDS = frozenset(
    {"nothing", "nobody", "none", "neither", "nor", "nowhere", "noone", "no-one", "hardly", "barely", "scarcely", "seldom"}
)
AUX_DEPS = frozenset({"aux", "auxpass"})
DO_FORMS = {"VBD": "did", "VBZ": "does", "VBP": "do"}
FINITE_TAGS = frozenset({"VBD", "VBZ", "VBP", "MD"})
_CLAUSE_DEPS = frozenset({"conj", "advcl", "ccomp", "parataxis"})
_ODD_UNDER_NEGATION = frozenset({"also", "too", "instead"})


def has_negation(sent: Span) -> bool:
    for t in sent:
        lower = t.lower_
        if t.dep_ == "neg" or lower in NEGATION_WORDS or t.lemma_.lower() in NEGATION_WORDS or lower in NEGATIVE_WORDS:
            return True
        if lower == "one" and t.i > sent.start and t.nbor(-1).lower_ == "no":
            return True
        # "Few critics liked it" -> "Few critics did not like it"; "Little is known"
        # ("a few", "the few", "a little village" are not negative)
        previous = t.nbor(-1).lower_ if t.i > sent.start else ""
        if lower == "few" and t.dep_ in ("amod", "nsubj", "nsubjpass") and previous not in ("a", "the", "very", "quite"):
            return True
        if lower == "little" and t.dep_ in ("nsubj", "nsubjpass") and previous != "a":
            return True
    return False


def negate(sent: Span, *, opened: str | None = None) -> TextEdit | None:
    """The negation edit of `sent`, or None. `opened`: the mark of a quotation
    still open at the sentence start (default: read from the sentence's document)."""
    if has_negation(sent):
        return None
    roots = [t for t in sent if t.dep_ == "ROOT"]
    if len(roots) != 1:
        return None
    root = roots[0]
    if root.pos_ not in ("VERB", "AUX") or not _main_clause(sent, root):
        return None
    subjects = [c for c in root.children if c.dep_ in SUBJECT_DEPS]
    if not subjects:
        return None
    subject_start = min(s.left_edge.i for s in subjects)
    text = sentence_text(sent)
    if opened is None:
        opened = quote_open_before(sent)
    edit = _edit(sent, root, subject_start)
    if edit is None or _inside_quotes(text, _offset(sent, root), opened=opened) or _inside_quotes(text, edit.start, opened=opened):
        return None
    return edit


def _edit(sent: Span, root: Token, subject_start: int) -> TextEdit | None:
    auxiliaries = sorted((c for c in root.children if c.dep_ in AUX_DEPS), key=lambda t: t.i)
    if auxiliaries:
        first = auxiliaries[0]
        if first.i < subject_start or first.lower_ == "to" or first.tag_ not in FINITE_TAGS:
            return None  # inversion ("Had he known"), infinitive, or no finite auxiliary
        at = _offset(sent, first) + len(first.text)
        return TextEdit(at, at, "", " not", "neg:aux")
    if root.i < subject_start:
        return None
    if root.pos_ == "AUX" or root.lemma_ == "be":  # copula ("was" -> "was not", "there are" -> "there are not")
        if root.tag_ not in FINITE_TAGS:
            return None
        at = _offset(sent, root) + len(root.text)
        return TextEdit(at, at, "", " not", "neg:copula")
    do_form = DO_FORMS.get(root.tag_)
    lemma = root.lemma_.lower()
    if do_form is None or not lemma.isalpha() or _reduced_relative(root):
        return None
    at = _offset(sent, root)
    do = do_form[:1].upper() + do_form[1:] if root.text[:1].isupper() else do_form
    return TextEdit(at, at + len(root.text), root.text, f"{do} not {lemma}", "neg:do-support")


def _main_clause(sent: Span, root: Token) -> bool:
    """The root heads a main clause: no subordinator or relative word of its
    own, and no modifier that reads oddly once negated."""
    for child in root.children:
        if child.dep_ == "mark":
            return False  # "Because the river flooded the town."
        if child.dep_ == "advmod" and child.lower_ in _ODD_UNDER_NEGATION:
            return False
        if child.dep_ in SUBJECT_DEPS and child.tag_ in ("WDT", "WP"):
            return False  # "which was built..." split off as its own sentence
    return not any(  # "as well" (not "as well as")
        t.lower_ == "well" and t.i > sent.start and t.nbor(-1).lower_ == "as" and (t.i + 1 >= sent.end or t.nbor().lower_ != "as")
        for t in sent
    )


def _reduced_relative(root: Token) -> bool:
    """Whether a past-tense root is more likely a participle modifying its
    subject ("His videos recorded as X while quarantined received..."): it
    has no object, and a later finite verb hanging off it has no noun subject
    of its own and no conjunction or punctuation before it."""
    if root.tag_ != "VBD" or any(c.dep_ in ("dobj", "attr") for c in root.children):
        return False
    for verb in root.children:
        if verb.i < root.i or verb.dep_ not in _CLAUSE_DEPS or verb.pos_ not in ("VERB", "AUX"):
            continue
        finite = verb.tag_ in FINITE_TAGS or any(c.dep_ in AUX_DEPS and c.tag_ in FINITE_TAGS for c in verb.children)
        if not finite:
            continue
        subjects = [c for c in verb.children if c.dep_ in SUBJECT_DEPS]
        if subjects and all(s.pos_ in ("NOUN", "PROPN", "PRON") for s in subjects):
            continue
        between = root.doc[root.i + 1 : verb.left_edge.i]
        if not subjects and any(t.pos_ == "CCONJ" or t.text in (",", ";", ":") for t in between):
            continue  # "He left the house and went home."
        return True
    return False
