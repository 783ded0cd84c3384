"""Helpers shared by the needle rule tests: parse a text, apply a rule."""

from __future__ import annotations


def first_sentence(nlp, text):
    return next(iter(nlp(text).sents))


def edited(nlp, rule, text):
    """The first sentence of `text` after `rule`'s edit, or None when the rule refuses it."""
    sent = first_sentence(nlp, text)
    edit = rule(sent)
    return None if edit is None else edit.apply(sent.text.strip())
