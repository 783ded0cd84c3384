"""Where the source lost a word (or a full stop): words no English sentence puts side by side.

`lost_word(span)` names the first such signal in a parsed sentence, or
returns None. The sentence gate (engine.corpus.sentence_gate,
"missing_word") drops such a sentence from its document, so a garbled
sentence is neither a needle nor part of a hay window. Each signal is a
pure test of the tagger's (and for one, the parser's) output; each was
kept only after reading every sentence it refused in tuning documents:

- "to_infinitive_bare": a verb that takes a to-infinitive right before a
  bare one ("who want feed the beast");
- "object_infinitive_bare": a verb that takes an object and a
  to-infinitive, its object and a bare verb ("would enable the town pay
  for ...": WordNet's frame 24, engine/corpus/object_control_verbs.json);

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
  noun before it;
- "lead_up_without_to": a span of time the named-entity tagger marks as a
  date or a time, then "leading up" or "led up" and a noun phrase ("in the
  weeks leading up the vote", "the hours leading up the launch"): the
  phrase of time takes "to" ("leading up to the vote"); a way or a boat
  leads up a hill or a channel, but it is no date;
- "sign_without_of": "show" with "no sign(s)" or "little sign" as its
  object, then a gerund ("the conflicts show no signs coming to an end"):
  the noun takes "of" ("show no signs of coming"); a sign of something
  that points or stands is "signs pointing to", and not after "show";
- "doubled_word": a lowercase word written twice in a row, the second
  copy in the first's role (the same head and relation, or the same tag
  and relation) or hung on it ("They have have been losing support", "a
  print by by the artist", "the the harbour"): the source's slip, which an
  edit between the copies would keep ungrammatical. A word said twice in
  two roles is English ("they had had enough": an auxiliary and a verb;
  "that that board": a conjunction and a determiner; "things like that
  that surprised me": two phrases), and so is an adjective said twice for
  emphasis ("many many more", "a long long while", "my great great aunt"),
  though the tagger cannot tell it from a slip ("his first first visit"),
  which is kept: an edit goes between two adjectives less often than
  between an auxiliary's copies;
- "doubled_phrase": two lowercase words written twice in a row with
  nothing between ("as well as well as the recent rise", "in the in the
  harbour"), not with a conjunction in the pair ("on and on and on");
- "full_stop_lost": a comma, then a capitalised function word that opens
  the subject of a finite verb ("two kinds of piers, One is the kind ...",
  "the bonds of 1904, The holders presented them ..."): two sentences fused
  where the source lost a full stop. Not "I", not a name's first word ("The
  Irish Times reported", the next word a proper noun), not inside a
  quotation ('he said, "The port is shut"') and not after a verb (an old
  speech's unmarked speech or question: "and say, We strove", "the
  question is, What is best").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from engine.needles.edits import FINITE_TAGS
from engine.needles.quotation import quotation_open_at

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

_ARTICLE_WORDS = frozenset({"a", "an", "the"})
# what never follows an article: a conjunction, a modal, a verb in the present, a pronoun, a determiner
# (not a preposition or a past form: an old text's "a like rising", "the said Board")
_NOT_AFTER_ARTICLE_TAGS = frozenset({"CC", "MD", "PRP", "DT", "VBZ", "VBP"})
_NOMINATIVE_WORDS = frozenset({"i", "he", "she", "we", "they", "who"})


def lost_word(span: Span) -> str | None:
    """Which signal of a lost word the tagged sentence `span` shows first, or None."""
    if _infinitive_without_to(span):
        return "to_infinitive_bare"
    if _object_infinitive_without_to(span):
        return "object_infinitive_bare"
    if _full_stop_lost(span):
        return "full_stop_lost"
    if span.doc.has_annotation("ENT_IOB") and _time_lead_up_without_to(span):
        return "lead_up_without_to"
    return _adjacent_words_signal([t for t in span if not t.is_space], span.doc.has_annotation("DEP"))


def _adjacent_words_signal(words: list[Token], parsed: bool) -> str | None:
    for k in range(len(words) - 1):
        first, second = words[k], words[k + 1]
        after = words[k + 2] if k + 2 < len(words) else None
        if parsed and _doubled(first, second):
            return "doubled_word"
        if _doubled_pair(words, k):
            return "doubled_phrase"
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
        if gerund_after and _shown_sign(first, second):
            return "sign_without_of"
    return None


def _shown_sign(quantity: Token, sign: Token) -> bool:
    """"no signs", "little sign" as the object of a form of "show" ("show no
    signs", "has shown little sign"): the noun before a gerund that lost its "of"."""
    if sign.lemma_.lower() != "sign" or quantity.lower_ not in ("no", "little", "any"):
        return False
    # the parser hangs the noun on "show" or, reading the gerund as its verb, elsewhere: the words before say it
    before = sign.doc[max(sign.sent.start, quantity.i - 3) : quantity.i]
    return any(w.lemma_.lower() == "show" for w in (sign.head, *before))


def _doubled(first: Token, second: Token) -> bool:
    """The same lowercase word twice in a row, the second in the first's role or hung on it (module docstring)."""
    if first.text != second.text or not (first.is_lower and first.is_alpha) or not first.whitespace_:
        return False
    if first.tag_ in ("JJ", "JJR", "JJS"):
        return False  # emphasis: "many many more"
    same_role = first.dep_ == second.dep_ and (first.head.i == second.head.i or first.tag_ == second.tag_)
    return same_role or second.head.i == first.i


def _doubled_pair(words: list[Token], k: int) -> bool:
    """Two lowercase words written twice in a row with nothing between ("as
    well as well as", "in the in the"): a phrase the source printed twice.
    Not with a conjunction in the pair ("on and on and on", "down and down
    and down": a repetition for emphasis)."""
    pair = words[k : k + 4]
    if len(pair) < 4 or any(not (t.is_lower and t.is_alpha and t.whitespace_) for t in pair[:3]) or not pair[3].is_lower:
        return False
    if pair[0].tag_ == "CC" or pair[1].tag_ == "CC":
        return False
    return pair[0].lower_ == pair[2].lower_ and pair[1].lower_ == pair[3].lower_


_PROPER_TAGS = frozenset({"NNP", "NNPS"})


def _full_stop_lost(span: Span) -> bool:
    from spacy.lang.en.stop_words import STOP_WORDS  # here: importing spaCy at start-up slows every CLI command

    doc = span.doc
    for word in span[1:]:
        if doc[word.i - 1].text != "," or not word.is_title or word.text == "I" or word.lower_ not in STOP_WORDS:
            continue
        if word.i >= 2 and doc[word.i - 2].tag_.startswith("VB"):
            continue  # an old text's unmarked speech or question: "and say, We strove", "the question is, What ..."
        if word.tag_ in _PROPER_TAGS or (word.i + 1 < span.end and doc[word.i + 1].tag_ in _PROPER_TAGS):
            continue
        if quotation_open_at(doc, word.i):
            continue
        subject = word if word.dep_ in ("nsubj", "nsubjpass") else word.head
        if subject.dep_ not in ("nsubj", "nsubjpass") or subject.i < word.i:
            continue
        verb = subject.head
        if verb.tag_ in FINITE_TAGS or any(c.dep_ in ("aux", "auxpass") and c.tag_ in FINITE_TAGS for c in verb.children):
            return True
    return False


_NOUN_END_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS", "VBG", "CD"})
_NOUN_PHRASE_START_TAGS = frozenset({"DT", "PDT", "PRP$", "CD", "NN", "NNS", "NNP", "NNPS"})
_FOCUSING_ADVERBS = frozenset({"just", "only", "simply", "merely"})


def _comparison_without_than(before: Token, after: Token, rest: list[Token]) -> bool:
    starts_noun_phrase = after.tag_ in _NOUN_PHRASE_START_TAGS or after.lower_ in _FOCUSING_ADVERBS
    return before.tag_ in _NOUN_END_TAGS and starts_noun_phrase and not any(t.lower_ == "than" for t in rest)


def _article_before_impossible(k: int, first: Token, second: Token, after: Token | None) -> bool:
    # a capitalised "A" inside a sentence is a name's letter ("Serie A and ..."), no article
    article = first.text in _ARTICLE_WORDS or (k == 0 and first.lower_ in _ARTICLE_WORDS)
    # "no" after an article names a side or a vote ("the no campaign", "a no confidence motion")
    if not article or second.lower_ in _ARTICLE_WORDS or second.lower_ == "no":
        return False
    hyphenated = after is not None and after.text == "-" and not second.whitespace_
    # a lowercase word: a name's own article may follow one ("the La Liga", "the El Paso office")
    return (second.tag_ in _NOT_AFTER_ARTICLE_TAGS and second.is_lower and not hyphenated) or second.text in (",", ".", ";")


# verbs that take a to-infinitive and never a bare one ("help", "make", "let", "dare", "need" may take a bare one)
_TO_INFINITIVE_VERBS = frozenset({"want", "decide", "hope", "agree", "refuse", "fail", "attempt", "intend", "seem", "tend"})


def _infinitive_without_to(span: Span) -> bool:
    """A verb that takes a to-infinitive right before a bare one ("those who
    want feed the beast"): the source lost "to", and the sentence is not
    well formed. The tagger must read both as verbs."""
    tokens = list(span)
    return any(
        verb.pos_ == "VERB" and verb.lemma_ in _TO_INFINITIVE_VERBS and bare.tag_ == "VB" and bare.pos_ in ("VERB", "AUX")
        for verb, bare in zip(tokens, tokens[1:])
    )


# verbs that take an object and a to-infinitive ("urge the board to close"), from WordNet's frame 24, less those that
# may take a bare one ("make", "let", "help", "see", ...): scripts/derive_object_control_verbs.py
_CONTROL_TABLES = json.loads(Path(__file__).with_name("object_control_verbs.json").read_text(encoding="utf-8"))
OBJECT_CONTROL_VERBS = frozenset(_CONTROL_TABLES["VERBS"])
THAT_CLAUSE_VERBS = frozenset(_CONTROL_TABLES["THAT_CLAUSE_VERBS"])  # "said the crews go": maybe a finite clause
_MODALS = frozenset("can could may might must shall should will would ought wo ca need dare".split())


def _object_infinitive_without_to(span: Span) -> bool:
    """A verb of OBJECT_CONTROL_VERBS, its direct object, then a bare verb
    that the parse hangs under the verb ("would enable the town pay for
    ..."): the source lost "to". The bare verb is lowercase and tagged VB,
    as a modal that its word is not, or as a present verb under the verb
    (the tagger's readings of "enable Ireland help fund"). A clause after
    the verb ("asked that the board return") has a subject, no object: it
    is not read."""
    for verb in span:
        if verb.pos_ != "VERB" or verb.lemma_.lower() not in OBJECT_CONTROL_VERBS:
            continue
        for obj in (child for child in verb.children if child.dep_ == "dobj" and child.i > verb.i):
            after = obj.right_edge.i + 1
            if after >= span.end:
                continue
            bare = span.doc[after]
            if not bare.is_lower:  # a name the tagger read as a verb ("gave Queen Bey a standing ovation")
                continue
            under_verb = verb.i in (bare.head.i, bare.head.head.i)
            if under_verb and (bare.tag_ == "VB" or (bare.tag_ == "MD" and bare.lower_.isalpha() and bare.lower_ not in _MODALS)):
                return True
            # the tagger's present-tense reading of the bare verb, hung anywhere under the verb ("enable Cork help
            # fund ..." with "help" an auxiliary of "fund"): after a verb that takes no finite clause, no subject
            # of its own precedes it
            if bare.tag_ == "VBP" and verb.lemma_.lower() not in THAT_CLAUSE_VERBS and verb in bare.ancestors:
                return True
        # the parser's other reading: the object as the subject of a base-form clause right after the verb
        # ("enable the board repair"); a clause with a subordinator or a subject pronoun ("he") is a finite one
        if verb.lemma_.lower() in THAT_CLAUSE_VERBS:
            continue
        for bare in (child for child in verb.children if child.dep_ in ("ccomp", "xcomp") and child.tag_ == "VB"):
            subjects = [t for t in bare.children if t.dep_ == "nsubj"]
            marked = any(t.dep_ in ("mark", "aux") for t in bare.children)
            if (
                len(subjects) == 1 and not marked and subjects[0].tag_ != "PRP"
                and subjects[0].left_edge.i == verb.i + 1 and subjects[0].right_edge.i + 1 == bare.i
            ):
                return True
    return False


# what opens the noun phrase "up" took as its object where "to" was lost: an article, a possessive, a number, a noun
_OBJECT_START_TAGS = frozenset({"DT", "PRP$", "CD", "NN", "NNS", "NNP", "NNPS", "JJ"})


def _time_lead_up_without_to(span: Span) -> bool:
    """A noun inside a DATE or TIME entity, then "leading"/"led" (not a verb's
    complement: "spent the years leading ..."), "up" and the start of a noun
    phrase ("the days leading up the hearing"): the source lost "to"."""
    words = [t for t in span if not t.is_space]
    for before, lead, up, after in zip(words, words[1:], words[2:], words[3:]):
        if lead.lower_ not in ("leading", "led") or up.lower_ != "up" or lead.dep_ in ("xcomp", "ccomp", "advcl"):
            continue
        if before.ent_type_ in ("DATE", "TIME") and before.tag_ in ("NN", "NNS") and after.tag_ in _OBJECT_START_TAGS:
            return True
    return False
