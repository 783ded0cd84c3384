"""Two main clauses run together with no stop between: a caption or a teaser fused onto a sentence.

Outlets print a photo's caption or a related article's title as a line of its
own, without a full stop; shipped as one line per article, it runs into the
sentence after it: "The new ferry is seen as a lifeline for the islands
Walsh enjoys the backing of the board." Each half is a clause with its own
subject and finite verb, and nothing joins them: no punctuation, no
conjunction, no subordinating word. Prose joins two main clauses with a
stop, a semicolon, a comma and a conjunction, or makes one of them
subordinate (a marker such as "when", "as", "because"; a relative or a
reported clause).

`fused_clause(span)`: the token where a second main clause starts, or None.
The second clause starts with a capitalised word right after a lowercase
noun, adjective or adverb (the end of the first clause's last phrase), with
whitespace and no punctuation between; the capitalised word opens the subject
of a finite verb after it (it is the subject, or a word of the subject's
phrase that runs up to its head, and the phrase starts with it); that verb is no relative, reported or
adjectival clause ("the deal China signed", "told reporters Walsh would
stay"); and before the capitalised word stands a finite verb with a subject
of its own that is a main clause too: not under a subordinating marker ("As
the storm hit land Walsh closed the quay" is prose with its comma left out),
nor a relative, reported, adjectival or complement clause, with no
conjunction or punctuation mark between its verb and the capitalised word
("... disliked the wait, and critic Ann Walsh said ..."). A clause
reported before its attribution ("..., officials say") is as main as the
attribution's. A sentence that
opens with a subject after a fronted phrase ("In the morning Walsh opened
the hall") has no finite verb before the subject and is not taken.

engine.corpus.hay_check refuses such a sentence for rand hay ("fused_clause").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.needles.edits import FINITE_TAGS

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

_PHRASE_END_TAGS = frozenset({"NN", "NNS", "JJ", "JJR", "JJS", "RB", "VBN", "CD"})
_SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "expl"})
# dependents inside a subject's phrase before its head: the capitalised word may be one of them
_PHRASE_DEPS = frozenset({"compound", "amod", "det", "poss", "nummod", "nmod", "quantmod"})
# a clause under another: relative, reported, adjectival, complement, subject clauses
_EMBEDDED_DEPS = frozenset({"relcl", "acl", "ccomp", "xcomp", "csubj", "csubjpass", "pcomp", "advmod", "amod", "prep", "pobj", "dep"})


def fused_clause(span: Span) -> Token | None:
    """The token opening a second main clause run onto the first (module docstring), or None."""
    words = [t for t in span if not t.is_space]
    for k in range(2, len(words) - 1):
        token, before = words[k], words[k - 1]
        if not (token.is_title and token.is_alpha and token.text != "I"):
            continue
        if not (before.whitespace_ and before.is_lower and before.is_alpha and before.tag_ in _PHRASE_END_TAGS and not before.is_stop):
            continue
        verb = _clause_verb(token, span)
        if verb is None or verb.i <= token.i or not _main_clause(verb):
            continue
        # a finite word before it, or the verb its auxiliary serves, heading a main clause with a subject,
        # and no conjunction or punctuation between that clause's verb and the capitalised word
        heads = {u.head if u.dep_ in ("aux", "auxpass") else u for u in words[:k] if u.tag_ in FINITE_TAGS}
        if any(
            u.i < token.i and _has_subject_before(u, token.i) and _main_clause(u) and not _joined(span, u.i, token.i)
            for u in heads
        ):
            return token
    return None


def _clause_verb(token: Token, span: Span) -> Token | None:
    """The finite verb whose subject phrase `token` opens, or None."""
    head = token
    while head.dep_ in _PHRASE_DEPS and head.head.i > head.i and head.head.i < span.end:
        head = head.head
    if head.dep_ not in _SUBJECT_DEPS or any(t.is_punct for t in span.doc[token.i : head.i]):
        return None
    if head.left_edge.i != token.i:
        return None  # the subject's phrase starts before it ("... when Yahoo chief Ann Walsh ended ...")
    verb = head.head
    if verb.tag_ in FINITE_TAGS:
        return verb
    # a passive or a verb after an auxiliary: the finite word is the auxiliary
    aux = next((c for c in verb.children if c.dep_ in ("aux", "auxpass") and c.tag_ in FINITE_TAGS), None)
    return verb if aux is not None else None


def _main_clause(verb: Token) -> bool:
    """Whether `verb` heads a clause that is under no other: the root, a
    conjunct of a main clause, or a clause hung on another with no marker
    (the parser's way of holding two sentences)."""
    if any(c.dep_ == "mark" for c in verb.children):
        return False
    if verb.dep_ == "ccomp" and verb.head.i > verb.i:
        # the words reported before their attribution ("... fields China is opening ..., officials say"):
        # as main as the attribution's clause
        return _main_clause(verb.head)
    if verb.dep_ in _EMBEDDED_DEPS:
        return False
    if verb.dep_ == "conj":
        return _main_clause(verb.head)
    return verb.dep_ in ("ROOT", "advcl", "parataxis")


def _joined(span: Span, start: int, end: int) -> bool:
    """Whether a conjunction or a punctuation mark stands between tokens `start` and `end`."""
    return any(t.tag_ == "CC" or t.is_punct for t in span.doc[start + 1 : end])


def _has_subject_before(verb: Token, limit: int) -> bool:
    return any(c.dep_ in _SUBJECT_DEPS and c.i < limit for c in verb.children)


def subjectless_clause(span: Span) -> Token | None:
    """A finite verb heading a clause hung on another with no marker, no
    comma and no conjunction between (advcl, parataxis, a conjunct), that
    has no subject of its own, after a name run
    onto a figure written in digits ("... turned 87 tanks into 3,600 Ann Walsh of the union
    is one of ..."): the parser took the second clause's subject as the
    first clause's object, so the verb is left without one; a caption printed
    without a stop and run onto the sentence after it. Prose's finite
    clauses have a subject, or a marker ("as is the case")."""
    for verb in span:
        if verb.tag_ not in FINITE_TAGS or verb.dep_ not in ("advcl", "parataxis", "conj"):
            continue
        if any(c.dep_ in _SUBJECT_DEPS or c.dep_ in ("csubj", "mark") or c.tag_ in ("WRB", "WDT", "WP") for c in verb.children):
            continue
        if any(t.is_punct or t.tag_ == "CC" for t in span.doc[verb.head.i + 1 : verb.i]) and verb.head.i < verb.i:
            continue  # after a comma or a conjunction: an ellipted subject ("..., is one of ...")
        if _name_after_figure(span, verb.i):
            return verb
    return None


def _name_after_figure(span: Span, limit: int) -> bool:
    """A figure written in digits right before a capitalised name, with no punctuation from the name to token
    `limit` ("into 3,600 Ann Walsh of the union is"): where a caption ending in a figure meets the next subject."""
    tokens = list(span.doc[span.start : limit])
    for k in range(len(tokens) - 1):
        figure, name = tokens[k], tokens[k + 1]
        if figure.tag_ == "CD" and any(c.isdigit() for c in figure.text) and name.pos_ == "PROPN" and name.is_title:
            if not any(t.is_punct for t in tokens[k + 1 :]):
                return True
    return False
