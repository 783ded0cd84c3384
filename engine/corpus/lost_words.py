"""Where the source lost a word: word pairs no English sentence puts side by side.

`lost_word(words)` names the first such signal in a sentence's tokens (spaces
left out), or returns None. The sentence gate (engine.corpus.sentence_gate,
"missing_word") drops such a sentence from its document, so a garbled
sentence is neither a needle nor part of a hay window. Each signal is a
pure test of the tagger's output on adjacent words; each was kept only
after reading every sentence it refused in tuning documents:

- "article_before": an article before a conjunction, a modal, a verb in
  the present, a pronoun, another determiner or a stop ("said that the
  that board", "the ,"), written in lowercase (not a name's own article:
  "the La Liga") and not before a hyphen ("a down-to-earth");
- "be_gerund": a subject pronoun before a bare "be" and a gerund ("who
  she be replacing"); an old speech's subjunctive ("if he be willing") has
  no gerund after it;
- "as_well_gerund": "as well" before a gerund ("as well demanding");
- "in_order_bare": "in order" before a bare verb ("in order repair the
  quay"): the phrase takes "to", "for" or "that";
- "rather_without_than": "rather" right after a noun (the end of an
  object), before a noun phrase or a focusing adverb, and no "than" after
  it in the sentence ("buy fuel in bulk rather just a few cans"): the
  comparison lost its "than". The degree adverb ("rather new", "rather
  like"), "or rather", "would rather" and "was rather a shock" have no
  noun before it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Token

_ARTICLE_WORDS = frozenset({"a", "an", "the"})
# what never follows an article: a conjunction, a modal, a verb in the present, a pronoun, a determiner
# (not a preposition or a past form: an old text's "a like rising", "the said Board")
_NOT_AFTER_ARTICLE_TAGS = frozenset({"CC", "MD", "PRP", "DT", "VBZ", "VBP"})
_NOMINATIVE_WORDS = frozenset({"i", "he", "she", "we", "they", "who"})


def lost_word(words: list[Token]) -> str | None:
    """Which signal of a lost word `words` (a sentence's tokens but spaces) shows first, or None."""
    for k in range(len(words) - 1):
        first, second = words[k], words[k + 1]
        after = words[k + 2] if k + 2 < len(words) else None
        if _article_before_impossible(k, first, second, after):
            return "article_before"
        gerund_after = after is not None and after.tag_ == "VBG"
        if first.lower_ in _NOMINATIVE_WORDS and second.lower_ == "be" and gerund_after:
            return "be_gerund"
        if first.lower_ == "as" and second.lower_ == "well" and gerund_after:
            return "as_well_gerund"
        # "in order" is always a preposition's phrase here: "in order of size" has "of", "in order to" has "to"
        if first.lower_ == "in" and second.lower_ == "order" and after is not None and after.tag_ == "VB" and after.is_lower:
            return "in_order_bare"
        if second.lower_ == "rather" and after is not None and _comparison_without_than(first, after, words[k + 3 :]):
            return "rather_without_than"
    return None


_NOUN_END_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS", "VBG", "CD"})
_NOUN_PHRASE_START_TAGS = frozenset({"DT", "PDT", "PRP$", "CD", "NN", "NNS", "NNP", "NNPS"})
_FOCUSING_ADVERBS = frozenset({"just", "only", "simply", "merely"})


def _comparison_without_than(before: Token, after: Token, rest: list[Token]) -> bool:
    starts_noun_phrase = after.tag_ in _NOUN_PHRASE_START_TAGS or after.lower_ in _FOCUSING_ADVERBS
    return before.tag_ in _NOUN_END_TAGS and starts_noun_phrase and not any(t.lower_ == "than" for t in rest)


def _article_before_impossible(k: int, first: Token, second: Token, after: Token | None) -> bool:
    # a capitalised "A" inside a sentence is a name's letter ("Serie A and ..."), no article
    article = first.text in _ARTICLE_WORDS or (k == 0 and first.lower_ in _ARTICLE_WORDS)
    if not article or second.lower_ in _ARTICLE_WORDS:
        return False
    hyphenated = after is not None and after.text == "-" and not second.whitespace_
    # a lowercase word: a name's own article may follow one ("the La Liga", "the El Paso office")
    return (second.tag_ in _NOT_AFTER_ARTICLE_TAGS and second.is_lower and not hyphenated) or second.text in (",", ".", ";")
