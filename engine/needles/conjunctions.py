"""The con needle: swap one coordinating "and" <-> "or" (a pure function of the parse).

`swap_conjunction(sentence)` returns the `TextEdit` of ONE swap (rule
con:and->or or con:or->and, casing kept, "&" never touched), or None when no
conjunction of the sentence can take the other one cleanly. When several
can, phrase-level coordinations ("the league and the cup") are preferred to
verb or clause coordinations ("He walked in and the room changed": "or"
between two reported facts reads oddly), and the pick among them is fixed by
a CRC-32 of the sentence text: the edit depends on the sentence only, never
on the experiment seed, like neg.

With `shapes="safe"` (the corpus setting con_shapes, its default) a
conjunction is swapped only where engine.needles.coordination_shape finds a
shape that held on unseen text (finite verbs or clauses, a finite verb's
determined objects, predicative adjectives), after every refusal below; with
"any" every coordination no refusal catches. Either way, a conjunction is
left alone when it is
- inside a quotation, including one opened in an earlier sentence of the
  paragraph, or inside a named-entity span;
- sentence-initial ("And the crowd cheered": a discourse connective);
- part of a fixed phrase (`FIXED_PHRASES`: "more or less", "rock and roll",
  "and so on", "and then", "and/or", binomial idioms such as "law and
  order", ... and "one X and the other Y");
- inside a hyphenated word, hyphens on both sides ("two-and-a-half hours",
  "black-and-white");
- an "or" between two numbers side by side ("seven or eight parties"): one
  approximate count;
- right before or after a sum of money, a percentage or a quantity ("between
  8% and 16% of the vote", "1% pension and 13.8% insurance contributions"):
  ranges, restatements and shares, which the words cannot tell from two claims;
- an appositive or alias "or" ("The fungi, or mycobionts, are",
  "(or slab)", "or simply X"), or a gloss: "or" between two bare singular
  nouns under one "the" or possessive ("the course or direction of the ship"),
  or ", or" + an amount restating the amount before it ("fell $1.20, or 3
  percent");
- anywhere inside an apposition to a person: a title or an office's name
  ("Ms Lee, head of sales and marketing at X, said");
- in a correlative (both/either/neither/whether) that scopes over it (not
  the determiner of another clause's noun: "Neither side would comment, and
  ..."), "between X and Y" /
  "among", a subject ("X and Y were" -> "X or Y were", unless
  engine.needles.subject_swap finds the agreement kept and no joint predicate;
  a coordination further inside the subject's phrase is swapped: "the
  price of oil and gas was"), before a "both" that refers back to it ("X
  and Y were both");
- between bare nouns counted together ("53 outposts and homes": "and"
  and "or" name the same items);
- reciprocal or symmetric: the sentence says "each other", "one another",
  "together", "respectively", "between them", "the one ... the other",
  "the former ... the latter", ..., or the coordination is
  an argument of a symmetric verb ("married X and Y", "merged", "combined", and
  their WordNet synonyms: "divided X and Y") or of a noun
  ("the rivalry of X and Y", "a treaty of X and Y": "of" joins the noun to
  both at once);
- inside a proper name: between capitalised words of a longer capitalised
  run ("the American Recovery and Reinvestment Act", "Federation Square and
  Town Hall"), coordinating the modifiers of a noun phrase that holds a
  proper noun ("the Pyrenees conifer and mixed forests ecoregion"), one-word
  names right before a singular common noun ("the Merton, Mitcham and
  Morden by-election"), the topic of a body's or a meeting's name ("the
  Oslo Conference on Nigeria and the Lake Chad Region": a capitalised group
  or event noun, its preposition, capitalised words to the end), or
  inside an entity of either model;
- renaming: an appositive coordination ("a unit, Tm or AM", "two groups:
  X and Y", the count fixes "and"), the object of "called"/"known as"
  (an object predicate, or "as" after a participle, not the last "as" of
  the conjunction "as well as"), or an "or" between two
  abbreviations;
- a two-member restrictive modifier of a plural noun, as the object of its
  preposition of place or origin or as its noun modifiers ("activists in
  Europe and the US", "the circuit and district courts"): the plural names
  the members meeting either condition, and "or" names the same set
  (adjectives are left: "complex and contentious talks" are both at once);
- between relative clauses whose subject holds the relative word (a list
  entry, "Nine boats, only one of which was built here, and all of which
  are"), or in such a clause cut from its noun;
- a swap that changes nothing: under a negation ("no tax in 1978 and 1979"
  = "no tax in 1978 or 1979"), a comparison ("more than X or Y", "exceeded
  that of A, B or C"), "any"/"every", a preposition that excludes its
  object as a set ("beyond", "besides", "except", "apart from"), or between
  complementary conditions ("X if A and Y if not", "otherwise");
- under the other licensors of "any"/"ever" ("despite", "unlikely that",
  "too ... to", "if", "before", "anyone who": engine.needles.coordination_polarity);
- a noun coordination run straight into a verb that agrees with it as a
  subject would ("years of A and a B have pushed"), unless the parse puts it
  inside that verb's subject and the subject's head agrees ("the price of
  oil and gas was"): the swap would break the agreement;
- in a sentence that repeats a phrase of three or more words back to back
  ("stationed in P stationed in P and B"): a garbled source;
- free choice, examples, a shared complement, a collective predicate or a
  post's title (engine.needles.coordination_sense);
- with two models (engine.needles.agreement), a coordination whose
  conjuncts or head the second model parses differently.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING

from engine.needles.name_kind_nouns import GROUP_NOUNS
from engine.needles.agreement import coordination_agrees
from engine.needles.coordination_joint import joint_verb
from engine.needles.coordination_polarity import polarity_refusal
from engine.needles.coordination_sense import sense_refusal
from engine.needles.coordination_shape import shape_refusal
from engine.needles.edits import (
    SUBJECT_DEPS,
    TextEdit,
    _inside_quotes,
    _match_case,
    _offset,
    finite_verb,
    quote_open_before,
    sentence_text,
)
from engine.needles.entities import SECOND_MODEL_ENTS
from engine.needles.part_of_a_name import EVENT_NOUNS
from engine.needles.negation import (
    CONTRACTED_NOT,
    NEGATION_WORDS,
    NEGATIVE_IMPLICATIVES,
    NEGATIVE_WORDS,
    relative_subject,
    unbalanced_quotation,
)
from engine.needles.subject_swap import subject_swap_refused

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

_SWAP = {"and": "or", "or": "and"}
CON_SHAPES = ("safe", "any")  # the corpus setting con_shapes (engine.corpus.prepare.CorpusSettings)
_CORRELATIVES = frozenset({"both", "either", "neither", "whether"})
# Fixed phrases whose conjunction cannot take the other one. Matched on
# lower-cased tokens around the conjunction.
FIXED_PHRASES = tuple(
    tuple(p.split())
    for p in (
        "more or less", "one or the other", "one or another", "or so", "or else", "or not", "whether or not",
        "sooner or later", "give or take", "and so on", "and so forth", "and the like", "and then", "and thus",
        "and hence", "and therefore", "and yet", "and also", "and so", "and now", "by and large", "by and for",
        "rock and roll", "rhythm and blues", "more and more", "less and less", "over and over", "again and again",
        "back and forth", "up and down", "on and off", "off and on", "each and every", "first and foremost", "here and there", "now and then",
        "now and again", "odds and ends", "pros and cons", "trial and error", "one and the same", "nice and", "and again",
        "and / or", "or / and", "or more", "or fewer", "or less",
        "or longer", "and more", "time and again", "or thereabouts", "or two", "or three", "or if",
        # a gapped clause: "X changed, and with it Y" (Y changed with X); "or with it" has no verb to share
        "and with it", "and with them",
        # the scalar "X or even Y" ("days or even weeks"): "and even" says the same
        "or even",
        # complementary conditions: "with or without a licence" covers every case either way
        "with or without", "with and without",
        # binomial idioms: one meaning, not two things
        "wheelers and dealers", "law and order", "rank and file", "checks and balances", "bread and butter",
        "nuts and bolts", "bits and pieces", "ups and downs", "ins and outs", "safe and sound", "peace and quiet",
        "wait and see", "give and take", "hit and run", "cut and dried", "life and death", "touch and go",
        "ebb and flow", "ebbs and flows",
    )
)  # fmt: skip
# "between them": the members share one total ("A and B won 12 medals between them"), no or-reading
_RECIPROCALS = (("each", "other"), ("one", "another"), ("together",), ("respectively",), ("jointly",), ("mutually",),
                ("alike",), ("apart",), ("in", "common"), ("combined",), ("between", "them"),
                ("between", "themselves"), ("among", "themselves"), ("amongst", "themselves"))  # fmt: skip
# two phrases that pick up a pair's members one by one later in the sentence ("A and B ... the one ... the
# other"), as "respectively" does: each needs both members in play
_MEMBER_BY_MEMBER = ((("the", "one"), ("the", "other")), (("the", "former"), ("the", "latter")))
_ALIAS_MARKERS = frozenset({"simply", "also", "alternatively", "formerly", "sometimes", "officially", "otherwise"})
_NAME_GLUE = frozenset({"of", "the", "for", "de", "du", "la", "von", "van"})
# prepositions after which a body's or a meeting's name says its subject ("Conference on A and B",
# "Commission for A and B", "Ministry of A and B"); not "in"/"to" ("the Summit in Oslo and the ...")
_NAME_TOPIC_PREPOSITIONS = frozenset({"on", "of", "for", "against"})
# prepositions whose object names the parties of a relation ("the fight of
# A and B", "A versus B"); "between"/"among" are matched anywhere above
_RELATION_PREPOSITIONS = frozenset({"of", "versus", "vs", "vs."})
# operators under which "A or B" and "A and B" say the same (or nothing sensible apart)
_COMPARISON_VERBS = frozenset("exceed surpass outnumber outweigh outpace outperform outstrip top".split())
# verbs that negate their object or complement ("refused talks with A or B" = "with A and B")
_NEGATIVE_VERBS = NEGATIVE_IMPLICATIVES | frozenset("deny reject prevent avoid prohibit forbid ban bar exclude".split())
_DOWNWARD_WORDS = frozenset({"than", "without", "unless", "before", "unlike"})
# the downward words that, as members of a coordination of periods, scope over nothing ("before and during the war")
_MEMBER_PERIODS = frozenset({"before"})
# prepositions that set their object apart from (or add it to) a domain as one set ("beyond A and B",
# "besides A and B", "except A and B", "apart from A and B"): every member is excluded alike, as under
# "without", so "or" names the same set (issue 27, session-17 ruling on "beyond")
_EXCLUSIVE_PREPOSITIONS = frozenset({"beyond", "besides", "except", "excepting", "excluding", "barring"})
_EXCLUSIVE_FROM = frozenset({"apart", "aside"})  # "apart from", "aside from"
_UNIVERSAL_DETERMINERS = frozenset({"any", "every", "each", "all", "no"})
# prepositions of place or origin that restrict a plural to its members
# ("activists in A and B"); not "of", "as", "for": arguments, not restrictions
_SET_PREPOSITIONS = frozenset("in from at across throughout inside outside near within around".split())
_HYPHENS = ("-", "\u2010", "\u2011")
_AMOUNT_ENTITIES = frozenset({"MONEY", "PERCENT", "QUANTITY"})
_CONDITION_WORDS = (("if", "not"), ("if", "so"), ("otherwise",), ("or", "else"))


def swap_conjunction(sent: Span, *, opened: str | None = None, shapes: str = "safe") -> TextEdit | None:
    """The one-conjunction swap of `sent`, or None. `opened`: the mark of a
    quotation still open at the sentence start (default: read from the document).
    `shapes`: "safe" swaps only the shapes of engine.needles.coordination_shape;
    "any" every coordination no refusal catches (the rules before issue 27's
    session 24, far more defects on unseen text: benchmarks/RESULTS.md)."""
    candidates = [t for t, why in conjunction_refusals(sent, opened=opened, shapes=shapes) if not why]
    if not candidates:
        return None
    text = sentence_text(sent)
    preferred = [t for t in candidates if not _verbal(t)] or candidates
    token = preferred[zlib.crc32(text.encode("utf-8")) % len(preferred)]
    at = _offset(sent, token)
    swapped = _SWAP[token.lower_]
    return TextEdit(at, at + len(token.text), token.text, _match_case(swapped, token.text), f"con:{token.lower_}->{swapped}")


def conjunction_refusals(sent: Span, *, opened: str | None = None, shapes: str = "safe") -> list[tuple[Token, str]]:
    """Each "and"/"or" of `sent` with why it may not be swapped ("" when it
    may): the check that refused, for measuring what refusals cost."""
    if shapes not in CON_SHAPES:
        raise ValueError(f"shapes={shapes!r}: expected one of {CON_SHAPES}")
    conjunctions = [t for t in sent if t.pos_ == "CCONJ" and t.lower_ in _SWAP]
    text = sentence_text(sent)
    if opened is None:
        opened = quote_open_before(sent)
    whole = _sentence_refusal(sent, text)
    out = []
    for t in conjunctions:
        why = whole or _refusal(sent, t) or (shape_refusal(t) if shapes == "safe" else "")
        if not why and any(_inside_quotes(text, _offset(sent, t), opened=mark) for mark in {opened, ""}):
            why = "inside a quotation"
        if not why and not coordination_agrees(sent, t):
            why = "models disagree"
        out.append((t, why))
    return out


def _sentence_refusal(sent: Span, text: str) -> str:
    if _reciprocal(sent):
        return "reciprocal"
    if _has_words(sent, _CONDITION_WORDS):
        return "complementary conditions"
    if _unparsed_contraction(sent):
        return "contracted negation"
    if unbalanced_quotation(text):
        return "quotation across sentences"
    if _repeated_phrase(sent):
        return "repeated phrase"  # a garbled source
    if any(t.dep_ == "ROOT" and any(c.dep_ in SUBJECT_DEPS and relative_subject(c) for c in t.children) for t in sent):
        return "relative clause"  # cut from its noun: "Only two of which were built here, and all of which are"
    return ""


def _refusal(sent: Span, token: Token) -> str:
    if token.ent_type_:
        return "inside an entity"
    if all(t.is_punct for t in sent[: token.i - sent.start]):
        return "sentence-initial"  # "And ..."
    head = token.head
    subject = _subject_coordination(head)
    if subject and subject_swap_refused(token):
        return "subject"  # "X and Y were" -> "X or Y were" (engine.needles.subject_swap says when it is safe)
    if any(t.dep_ == "appos" and _person(t.head) for t in [head, *head.ancestors]):
        return "apposition"  # a title: "Ms Lee, head of sales and marketing at X, said"
    if token.lower_ == "and" and any(_floating_both(t, token) for t in sent):
        return "both"  # "X and Y were both", "A and B, who have both"
    if _counted(head):
        return "counted"  # "40 towns and villages" = "40 towns or villages"
    if _fixed_phrase(sent, token):
        return "fixed phrase"
    if _hyphen_joined(token):
        return "hyphenated"  # "two-and-a-half", "black-and-white": one word
    if _approximate_count(token):
        return "approximate count"  # "seven or eight parties": a range, not two counts
    if _members_picked_up_later(sent, token):
        return "reciprocal"
    if _alias(sent, token):
        return "alias"
    if _gloss(token) or _amount_gloss(token):
        return "gloss"
    if _in_name(sent, token):
        return "in a name"
    if _renaming(sent, token):
        return "renaming"
    doc = token.doc
    # correlatives ("either X or Y", "both X and Y", "whether X or Y") sit
    # before the first conjunct, where the parser attaches them anywhere
    if any(t.lower_ in _CORRELATIVES and not _quantifies_elsewhere(t, token) for t in doc[sent.start : token.i]):
        return "correlative"
    for t in doc[sent.start : token.i]:  # "between X and Y", "among A, B and C"
        if t.lower_ in ("between", "among", "amongst") and t.left_edge.i <= token.i <= t.right_edge.i:
            return "between"
    if _symmetric_argument(head) or _relation_argument(head):
        return "symmetric"
    if _downward(head):
        return "downward operator"
    polarity = polarity_refusal(token)  # "despite", "unlikely that", "too ... to", "if", "anyone who", ...
    if polarity:
        return polarity
    if _negated(sent, token):
        return "negated"
    if sent.root.pos_ not in ("VERB", "AUX") and any(c.dep_ in SUBJECT_DEPS and relative_subject(c) for c in head.children):
        return "relative clause"  # a list entry: "Nine boats, only two of which were built here, and all of which are"
    if _set_modifier(token):
        return "modifier of a plural"
    why = sense_refusal(token)
    if not why and _amount_beside(token):
        why = "amounts"  # "8% and 16% of the vote", "1% pension and 13.8% insurance contributions"
    if not why and not subject and _agreeing_verb_after(token):  # a swapped subject's agreement is checked already
        why = "agreement"  # "years of A and a B have pushed": the parse's object may be the verb's subject
    return why


def _set_modifier(token: Token) -> bool:
    """The two-member coordination at `token` restricts a plural noun, as the
    object of its preposition or as its noun modifiers ("activists in Europe
    and the US", "circuit and district courts"), also through a participle
    ("letters posted in May and June"): the plural names the members
    that meet either condition, so "or" names the same set. Adjectives are
    left alone: most hold at once ("complex and contentious talks")."""
    first = token.head
    while first.dep_ == "conj" and first.head.i != first.i:
        first = first.head
    after = token.nbor() if token.i + 1 < len(token.doc) else token
    siblings = after.head.i == first.head.i and after.dep_ == first.dep_  # "current and former members": two amod
    if len(first.conjuncts) + siblings != 1:
        return False  # a list of three or more reads as a list (the protocol's C)
    if first.dep_ == "pobj" and first.head.dep_ == "prep" and first.head.lower_ in _SET_PREPOSITIONS:
        noun = first.head.head
        if noun.dep_ == "acl" and noun.tag_ == "VBN":
            noun = noun.head  # a participle restricting the plural: "memos issued in 2007 and 2009"
    elif first.dep_ in ("compound", "nmod") and first.pos_ in ("NOUN", "PROPN") or first.ent_type_ == "ORDINAL":
        noun = first.head  # "circuit and district courts", "the second and fourth cars"; not "complex and costly repairs"
    else:
        return False
    return noun.tag_ in ("NNS", "NNPS")


def _subject_coordination(head: Token) -> bool:
    """Whether the coordination whose first conjunct is `head` is a subject
    (its verb agrees with it: "X and Y were" -> "X or Y were"). A
    coordination further inside the subject's phrase ("the price of oil and
    gas was", "current and former officials have") leaves the agreement as
    it was."""
    while head.dep_ == "conj" and head.head.i != head.i:
        head = head.head
    return head.dep_ in SUBJECT_DEPS


def _agreeing_verb_after(token: Token) -> bool:
    """A noun coordination runs straight into a verb inflected for number (a
    noun phrase after the conjunction, no comma) that agrees with it as a
    subject would: plural after "and", singular after "or" (whose verb
    agrees with the nearest member). Whatever the parse says, the
    coordination may be that verb's subject ("years of bad planning and a
    recession have pushed", where the parser puts the "and" inside the "of"
    phrase), and the swap then breaks the agreement ("A or a B have
    pushed"). Not when the parse is consistent: the coordination inside
    the verb's subject, whose head agrees with the verb ("the price of oil
    and gas was", "the exports of wool and timber are", "the boats that
    carried fish and crabs have left"): the swap keeps the agreement."""
    if token.head.pos_ not in ("NOUN", "PROPN", "NUM"):
        return False  # clauses ("they sold fish and the crabs were taken"), adverbs ("died early and ...")
    doc = token.doc
    for verb in doc[token.i + 1 : token.sent.end]:
        if verb.pos_ in ("VERB", "AUX") and verb.tag_ not in ("VBN", "VBG") or verb.lower_ == "not":
            break
        if not _in_noun_phrase(verb):
            return False  # the verb is not the next word after one noun phrase: "A and their deeds which are"
    else:
        return False
    if verb.tag_ == "VBP" or verb.lower_ == "were":
        number = "plural"
    elif verb.tag_ == "VBZ" or verb.lower_ == "was":
        number = "singular"
    else:
        return False  # "pushed", "will push": no agreement to break
    if number != ("plural" if token.lower_ == "and" else "singular"):
        return False
    # the parse is consistent: the coordination lies inside the verb's subject, whose head agrees with the verb
    clause = verb.head if verb.dep_ in ("aux", "auxpass") else verb
    ancestors = {a.i for a in token.head.ancestors}
    return not any(
        c.dep_ in ("nsubj", "nsubjpass") and c.i in ancestors and _number(c) == number for c in clause.children
    )


def _in_noun_phrase(word: Token) -> bool:
    """A word that may stand inside a plain noun phrase ("a long global
    recession", "years of bad planning", "the town's"): no clause opener,
    pronoun, conjunction or punctuation."""
    if word.tag_ in ("WDT", "WP", "WP$", "WRB"):
        return False
    if word.pos_ == "PRON":
        return word.tag_ == "PRP$"
    return word.pos_ in ("DET", "ADJ", "NOUN", "PROPN", "NUM", "PART", "ADP", "ADV", "VERB") or word.text in ("-", "'", "’")


def _number(noun: Token) -> str:
    if noun.tag_ in ("NNS", "NNPS"):
        return "plural"
    return "singular" if noun.tag_ in ("NN", "NNP") else ""


def _repeated_phrase(sent: Span) -> bool:
    """The sentence repeats a phrase of three or more words back to back
    ("stationed in Poland stationed in Poland"): a garbled source, not the
    document's prose."""
    words = [t.lower_ for t in sent if not t.is_punct]
    for n in range(3, len(words) // 2 + 1):
        for k in range(len(words) - 2 * n + 1):
            if words[k : k + n] == words[k + n : k + 2 * n]:
                return True
    return False


def _person(token: Token) -> bool:
    """A person's name or a personal pronoun (what a title is in apposition to)."""
    return token.ent_type_ == "PERSON" or token.tag_ == "PRP"


def _floating_both(both: Token, token: Token) -> bool:
    """A "both" after `token` that refers back to a pair ("X and Y were
    both", "A and B, who have both said"), not the "both" of a later
    coordination of its own ("... and sparked protests by both A and B")."""
    if both.lower_ != "both" or both.i < token.i:
        return False
    own = both.head
    return not (own.i != token.head.i and any(c.dep_ == "cc" for c in own.children))


def _counted(head: Token) -> bool:
    """A coordination of bare nouns counted together by a number on the
    first ("53 outposts and homes", "more than 100 countries and
    organizations"): "and" and "or" name the same items."""
    if head.pos_ != "NOUN" or not any(c.dep_ == "nummod" for c in head.children):
        return False
    conjuncts = [c for c in head.children if c.dep_ == "conj"]
    return bool(conjuncts) and all(
        c.pos_ == "NOUN" and not any(d.dep_ in ("det", "nummod", "poss") for d in c.children) for c in conjuncts
    )


def _verbal(token: Token) -> bool:
    """Whether the conjunction joins verbs or clauses rather than phrases."""
    return token.head.pos_ in ("VERB", "AUX")


def _fixed_phrase(sent: Span, token: Token) -> bool:
    doc = token.doc
    for phrase in FIXED_PHRASES:
        for k, word in enumerate(phrase):
            if word != token.lower_:
                continue
            start = token.i - k
            if start >= sent.start and start + len(phrase) <= sent.end and all(
                doc[start + n].lower_ == w for n, w in enumerate(phrase)
            ):
                return True
    # "one X and the other Y", "one implementation and another"
    after = [t.lower_ for t in doc[token.i + 1 : min(sent.end, token.i + 3)]]
    return after[:2] == ["the", "other"] or after[:1] == ["another"]


def _quantifies_elsewhere(word: Token, token: Token) -> bool:
    """The correlative word `word` is the determiner of a noun outside the
    coordination at `token`, or the subordinator of a clause outside it
    ("Neither side would comment, and the mayor left for A and B", "Both
    towns sent boats, and the crews rowed to A and B"): it quantifies that
    noun or opens that clause, and says nothing of the coordination."""
    first = token.head
    while first.dep_ == "conj" and first.head.i != first.i:
        first = first.head
    members = {first.i, *(c.i for c in first.conjuncts)}
    owner = word.head
    if owner.i in members or owner.left_edge.i <= token.i <= owner.right_edge.i:
        return False  # "both fish and crabs"; "whether he was drunk with A or B": the clause holds the coordination
    return word.dep_ == "det" and owner.pos_ in ("NOUN", "PROPN") or word.dep_ == "mark" and owner.pos_ in ("VERB", "AUX")


def _gloss(token: Token) -> bool:
    """An "or" between two bare singular common nouns under one definite
    article or possessive ("the course or direction of the ship", "a ship's
    initial trajectory or direction"): a definite determiner names one known
    thing, so the second noun renames the first ("that is"); alternatives
    take a determiner each ("the knife or the fork"). "and" would make the
    one thing two."""
    if token.lower_ != "or":
        return False
    first = token.head
    if first.pos_ != "NOUN" or first.tag_ != "NN" or len(first.conjuncts) != 1:
        return False
    second = first.conjuncts[0]
    if second.i < token.i or second.pos_ != "NOUN" or second.tag_ != "NN":
        return False
    if token.i != first.i + 1 or any(c.dep_ != "compound" for c in second.children if c.i < second.i):
        return False  # "the course or direction", "the think tank or opinion circuit"; not "the ship, or a new ferry"
    return any(c.dep_ == "det" and c.lower_ == "the" or c.dep_ == "poss" for c in first.children)


def _hyphen_joined(token: Token) -> bool:
    """The conjunction is joined by hyphens, without a space, to the words
    before and after it ("two-and-a-half hours", "a black-and-white film"):
    it is inside one hyphenated word, whose other conjunction breaks the
    word. A hyphen on one side only is mostly a hyphen typed for a space
    ("appealed the decision-and have time"), left to the other checks."""
    doc = token.doc
    before = doc[token.i - 1] if token.i > 0 else None
    after = doc[token.i + 1] if token.i + 1 < len(doc) else None
    glued_before = before is not None and not before.whitespace_ and before.text.endswith(_HYPHENS)
    glued_after = after is not None and not token.whitespace_ and after.text.startswith(_HYPHENS)
    return glued_before and glued_after


def _approximate_count(token: Token) -> bool:
    """An "or" between two numbers side by side ("seven or eight parties",
    "10 or 12 times"): the pair gives one approximate count, a range, and
    "and" makes it two counts of the same thing, which reads as no count
    ("seven and eight parties"). Years are left ("in 1990 or 1991")."""
    if token.lower_ != "or" or token.i == 0 or token.i + 1 >= len(token.doc):
        return False
    before, after = token.doc[token.i - 1], token.doc[token.i + 1]
    return all(w.tag_ == "CD" and w.like_num and w.ent_type_ != "DATE" for w in (before, after))


def _amount_beside(token: Token) -> bool:
    """A sum of money, a percentage or a quantity (the models' amount
    entities) right before or after the conjunction, punctuation and
    currency signs aside ("between 8% and 16% of the vote", "pay 1% pension
    and 13.8% insurance contributions", "cut 40 jobs and $2 million"): amounts joined by "and"
    or "or" are ranges, restatements, shares of one total or the kinds of one
    plural far more often than two claims, and the words cannot tell which
    (issue 27: part 3's "8%-and 16%-of the vote", read 5931's "1% pension and
    13.8% national insurance contributions"), so the rule abstains. Counts
    are left ("nine boats or ten small trawlers", "1,200 at home and 1,800
    in the wards": two counted groups, two claims), and so are dates. Checked
    after the other refusals, whose reasons say more ("partition", "gloss"),
    and not between clauses ("bought it for £320,000 and the building
    became a centre": the amount ends the first clause)."""
    if _verbal(token):
        return False
    doc, sent = token.doc, token.sent
    before = token.i - 1
    while before >= sent.start and (doc[before].is_punct or doc[before].text in _HYPHENS):
        before -= 1
    after = token.i + 1
    while after < sent.end and (doc[after].is_punct or doc[after].tag_ == "$" or doc[after].text in _HYPHENS):
        after += 1
    return any(sent.start <= i < sent.end and doc[i].ent_type_ in _AMOUNT_ENTITIES for i in (before, after))


def _amount_gloss(token: Token) -> bool:
    """", or" + an amount right after an amount ("fell $1.20, or 3 percent",
    "lost 88 cents, or 2.1 percent", "rose 40 points, or 0.5%"): the second
    restates the first in another measure, one change, and "and" makes the
    one change two. Read from the words: the parser hangs the second amount
    anywhere (often on the verb, as if it were a clause of its own). Dates
    are left ("in 2010, or 2011")."""
    doc = token.doc
    if token.lower_ != "or" or token.i < 2 or token.i + 1 >= len(doc) or doc[token.i - 1].text != ",":
        return False
    before, after = doc[token.i - 2], doc[token.i + 1]
    if "DATE" in (before.ent_type_, after.ent_type_):
        return False
    starts_amount = after.tag_ in ("CD", "$") or after.ent_type_ in _AMOUNT_ENTITIES
    return starts_amount and _amount(before)


def _amount(word: Token) -> bool:
    """A number, a money or percentage amount, or a noun counted by a number ("2 percent", "40 points")."""
    if word.tag_ == "CD" or word.ent_type_ in _AMOUNT_ENTITIES:
        return True
    return word.pos_ == "NOUN" and any(c.dep_ == "nummod" and c.tag_ == "CD" for c in word.children)


def _alias(sent: Span, token: Token) -> bool:
    """An "or" that renames: "The fungi, or mycobionts, are", "(or slab)", "or simply X"."""
    if token.lower_ != "or":
        return False
    doc = token.doc
    previous = doc[token.i - 1] if token.i > sent.start else None
    following = doc[token.i + 1] if token.i + 1 < sent.end else None
    if previous is not None and previous.text == "(":
        return True
    if following is not None and following.lower_ in _ALIAS_MARKERS:
        return True
    head = token.head
    if previous is None or previous.text != "," or head.pos_ not in ("NOUN", "PROPN"):
        return False
    # a two-member "X, or Y" (not the last item of "A, B, or C")
    conjuncts = [c for c in head.children if c.dep_ == "conj"]
    return head.dep_ != "conj" and len(conjuncts) <= 1


def _in_name(sent: Span, token: Token) -> bool:
    doc = token.doc

    def capitalised(i: int) -> bool:
        return sent.start < i < sent.end and doc[i].text[:1].isupper()

    def glued(i: int, step: int) -> bool:  # a capitalised word further on, over "of"/"the"
        i += step
        while sent.start <= i < sent.end and doc[i].lower_ in _NAME_GLUE:
            i += step
        return capitalised(i)

    if capitalised(token.i - 1) and capitalised(token.i + 1) and (glued(token.i - 1, -1) or glued(token.i + 1, 1)):
        return not _two_people(token)  # "American Recovery and Reinvestment Act"; not "Mary Reynolds and Ann Sparks"
    if capitalised(token.i - 1) and _names_before_a_common_noun(sent, token):
        return True  # "the Merton, Mitcham and Morden by-election": a constituency's name
    if _in_a_bodys_topic(sent, token):
        return True  # "the Oslo Conference on Nigeria and the Lake Chad Region"
    head = token.head
    if head.dep_ in ("compound", "amod", "nmod") and head.head.i > token.i and head.head.pos_ in ("NOUN", "PROPN"):
        noun = head.head
        return any(t.pos_ == "PROPN" for t in doc[noun.left_edge.i : noun.i + 1])  # "Pyrenees conifer and mixed forests"
    return False


def _names_before_a_common_noun(sent: Span, token: Token) -> bool:
    """The word after the conjunction is a one-word proper noun and a
    singular common noun follows it straight away ("the Merton, Mitcham and
    Morden by-election", "the Tyne and Wear area"): the coordinated names
    modify that one noun as a compound, the name of one thing (a
    constituency, a region, a company's division), and "or" breaks the name.
    The parser often leaves such a run flat (the noun as a preposition's
    object), so the words are read, not the tree. A plural noun after it
    ("the French and German governments") names a set: left to the other checks."""
    doc = token.doc
    if token.i + 2 >= sent.end:
        return False
    name, noun = doc[token.i + 1], doc[token.i + 2]
    if name.pos_ != "PROPN" or not name.text[:1].isupper() or not name.whitespace_ or not noun.text[:1].islower():
        return False
    if noun.ent_type_ or noun.dep_ == "npadvmod":
        return False  # "from Paris and Berlin yesterday": a time of the clause, not a noun the names modify
    if noun.pos_ == "NOUN" and noun.tag_ == "NN":
        return True
    # a hyphenated noun ("by-election", "cross-party"), which the tokenizer cuts at its hyphen; not a verb
    # ("the firm A and B co-founded")
    return (
        noun.is_alpha
        and not noun.whitespace_
        and noun.i + 2 < sent.end
        and doc[noun.i + 1].text == "-"
        and doc[noun.i + 2].pos_ == "NOUN"
    )


def _in_a_bodys_topic(sent: Span, token: Token) -> bool:
    """The conjunction joins the topic of a body's or a meeting's name:
    "the Oslo Conference on Nigeria and the Lake Chad Region", "the
    Commission for Africa and the Middle East". Read from the words, not the
    tree (the parser hangs the second part anywhere, and the models' entities
    often end before the conjunction): left of it, a run of capitalised words
    and lowercase glue ("of", "the", "on") going back to a capitalised head
    noun of a group or an event (WordNet, engine.needles.name_kind_nouns; the
    event nouns of engine.needles.part_of_a_name) with its topic's preposition;
    right of it, past "the", capitalised words ending on a noun that no
    lowercase noun follows ("the Kurdish forces" is prose) and that is not
    itself a body's noun ("the Ministry of Defence and the Army": two bodies)."""
    doc = token.doc

    def capitalised(i: int) -> bool:
        return sent.start < i < sent.end and doc[i].text[:1].isupper() and doc[i].is_alpha

    if not capitalised(token.i - 1):
        return False
    i = token.i + 1
    while i < sent.end and doc[i].lower_ == "the":
        i += 1
    if not capitalised(i):
        return False
    while capitalised(i + 1):
        i += 1
    last = doc[i]
    if last.pos_ not in ("PROPN", "NOUN") or _body_noun(last):
        return False
    if i + 1 < sent.end and doc[i + 1].pos_ in ("NOUN", "PROPN") and doc[i + 1].is_lower:
        return False
    i = token.i - 1
    while i > sent.start:
        word = doc[i]
        if word.lower_ in _NAME_TOPIC_PREPOSITIONS and capitalised(i - 1) and _body_noun(doc[i - 1]):
            return True
        if not (capitalised(i) or word.lower_ in _NAME_GLUE or word.lower_ in _NAME_TOPIC_PREPOSITIONS):
            return False
        i -= 1
    return False


def _body_noun(word: Token) -> bool:
    """A noun a body or a meeting is named by: "Conference", "Commission", "Ministry", "Summit"."""
    lemma = word.lemma_.lower() if word.pos_ == "NOUN" else word.lower_
    return word.pos_ in ("NOUN", "PROPN") and (word.lower_ in GROUP_NOUNS or lemma in GROUP_NOUNS or word.lower_ in EVENT_NOUNS)


def _two_people(token: Token) -> bool:
    """Both models end a person's name right before the conjunction and
    start another right after it, and no capitalised word follows that one
    ("the Lewis and Clark Expedition"): two people, each named in full, not
    one name holding "and"."""
    doc = token.doc
    if token.i + 1 >= len(doc) or token.i == 0:
        return False
    left, right = doc[token.i - 1], doc[token.i + 1]
    if left.ent_type_ != "PERSON" or right.ent_type_ != "PERSON" or right.ent_iob_ != "B":
        return False
    entity = next((e for e in doc.ents if e.start == right.i), None)
    if entity is None or entity.end < len(doc) and doc[entity.end].text[:1].isupper():
        return False
    second = [(start, end) for start, end, label in doc.user_data.get(SECOND_MODEL_ENTS) or () if label == "PERSON"]
    return any(end == left.idx + len(left.text) for _, end in second) and any(start == right.idx for start, _ in second)


def _reciprocal(sent: Span) -> bool:
    return _has_words(sent, _RECIPROCALS)


def _members_picked_up_later(sent: Span, token: Token) -> bool:
    """The phrases of a pair in `_MEMBER_BY_MEMBER` stand alone in the
    sentence, the second after the conjunction `token`: they pick up the
    members of a pair before them one by one ("A and B ... the one ... the
    other"), or are themselves the members ("the one ... and the other"),
    whose "or" leaves the pair's claim half made. Both before it, they point
    to an earlier pair ("the former ... the latter ... fixing A and B")."""
    after = sent[token.i + 1 - sent.start :]
    return any(_pronoun_phrase(sent, first) and _pronoun_phrase(after, last) for first, last in _MEMBER_BY_MEMBER)


def _pronoun_phrase(words_span: Span, phrase: tuple[str, ...]) -> bool:
    """`phrase` stands alone in `words_span` as a noun phrase: no noun or adjective
    after it for it to modify ("the other", not "the other side")."""
    words = [t.lower_ for t in words_span]
    n = len(phrase)
    return any(
        words[k : k + n] == list(phrase)
        and (k + n == len(words) or words_span[k + n].pos_ not in ("NOUN", "PROPN", "ADJ", "NUM"))
        for k in range(len(words))
    )


def _has_words(sent: Span, phrases: tuple[tuple[str, ...], ...]) -> bool:
    words = [t.lower_ for t in sent]
    return any(words[k : k + len(p)] == list(p) for p in phrases for k in range(len(words)))


def _as_well_as(token: Token) -> bool:
    """`token` is the last "as" of the conjunction "as well as" ("expressed sympathy for X, as well as Y
    and Z"), which adds what follows; it names nothing the participle before it calls ("known as")."""
    doc = token.doc
    return token.i >= 2 and doc[token.i - 1].lower_ == "well" and doc[token.i - 2].lower_ == "as"


def _renaming(sent: Span, token: Token) -> bool:
    """The coordination renames or counts what comes before it: an "or"
    in apposition or after "called" ("a unit, Tm or AM"; an object
    predicate) or between two abbreviations; names of one thing after "known
    as"/"referred to as", with either conjunction; an appositive or a list after a colon that spells out a
    counted noun ("two partners: A and B", "seven types, three in X and four
    in Y"): the count holds only with "and"."""
    head = token.head
    doc = token.doc
    if token.lower_ == "or":
        if head.dep_ in ("appos", "oprd"):
            return True
        if token.i + 1 < sent.end and _abbreviation(doc[token.i - 1]) and _abbreviation(doc[token.i + 1]):
            return True
    first = head
    while first.dep_ == "conj" and first.head.i != first.i:
        first = first.head
    if first.dep_ == "pobj" and first.head.lower_ == "as" and first.head.head.tag_ == "VBN" and not _as_well_as(first.head):
        return True  # "known as X, Y and Z", "referred to as X or Y": names of one thing, with either word
    counted = []
    if first.tag_ == "CD" and _small_count(first) and any(t.text == ":" for t in doc[first.i : token.i]):
        return True  # the parser's "three of the four capitals: A, B and C" with A as the count's own conjunct
    if first.dep_ == "appos":
        counted.append(first.head)
    if first.pos_ == "NOUN" and first.i + 1 < sent.end and doc[first.i + 1].text in (",", ":"):
        counted.append(first)  # the parser's "three crops, barley and oats": the counted noun as first conjunct
    if first.left_edge.i - 2 >= sent.start and doc[first.left_edge.i - 1].text == ":":
        counted.append(doc[first.left_edge.i - 2])
    for noun in counted:
        while noun is not None:  # "two kinds of goods:", climbing over "of"
            if any(c.dep_ == "nummod" and _small_count(c) for c in noun.children):
                return True
            if noun.tag_ == "CD" and _small_count(noun):
                return True  # "three of the four largest ports: A, B and C" (the count is the head)
            # over "of" and over a place after the counted noun ("three of the four ports in the west:")
            noun = noun.head.head if noun.dep_ == "pobj" and noun.head.dep_ == "prep" else None
            if noun is not None and noun.pos_ in ("VERB", "AUX"):
                noun = None
    colons = [t.i for t in doc[sent.start : token.i] if t.text == ":"]
    if colons and first.i > colons[-1]:
        # clauses after a colon spelling out a counted plural before it ("dealt two blows to the town: it
        # flooded the quay, and it sank the ferry"), however the parser hangs the clause before the colon
        if any(
            t.tag_ in ("NNS", "NNPS") and any(c.dep_ == "nummod" and _small_count(c) for c in t.children)
            for t in doc[sent.start : colons[-1]]
        ):
            return True
    return _in_second_entity(token)


def _small_count(number: Token) -> bool:
    """A number that counts items ("two", "3"), not a year or an amount."""
    return number.is_alpha or (number.text.isdigit() and int(number.text) < 100)


def _abbreviation(token: Token) -> bool:
    """A short token with a capital after its first letter ("AM", "Tm", "BBC")
    or in capitals throughout."""
    text = token.text
    return token.is_alpha and (text.isupper() and len(text) > 1 or (len(text) <= 3 and text[:1].isupper()))


def _in_second_entity(token: Token) -> bool:
    """The conjunction lies inside an entity of the second model (doc.user_data)."""
    spans = token.doc.user_data.get(SECOND_MODEL_ENTS) or ()
    return any(start < token.idx < end for start, end, _label in spans)


def _relation_argument(head: Token) -> bool:
    """The coordination names the parties of a noun ("the fight of Achilles
    and Hector", "a treaty of Spain and Portugal", "A versus B"): the object of
    "of" under a noun with proper-noun conjuncts, or of "versus"."""
    if head.dep_ != "pobj" or head.head.lower_ not in _RELATION_PREPOSITIONS:
        return False
    if head.head.lower_ != "of":
        return True
    names = [head, *head.conjuncts]
    return head.head.head.pos_ in ("NOUN", "PROPN") and all(t.pos_ == "PROPN" for t in names)


def _unparsed_contraction(sent: Span) -> bool:
    """A contracted "not" the parse does not read as a negation of its own (a
    mojibake "didn"t" left one token, a "n't" attached as anything but "neg"):
    _negated, which finds the clause a negation covers, cannot see it. A
    parsed "n't" is left to _negated like "not" ("decided that it wasn't safe
    and closed it": the negation is in the complement only)."""
    for found in CONTRACTED_NOT.finditer(sent.text):
        at = sent.start_char + found.start() + 1  # the "n" of "n't"
        token = next((t for t in sent if t.idx == at), None)
        if token is None or not _negative_word(token):
            return True
    return False


def _negative_word(t: Token) -> bool:
    return t.dep_ == "neg" or t.lower_ in NEGATION_WORDS or t.lower_ in NEGATIVE_WORDS


def _negated(sent: Span, token: Token) -> bool:
    """The conjunction lies in the clause of a negation ("did not hire A or
    B", "paid no tax in 1978 and 1979"): the subtree of the nearest verb
    above the negative word, unless it joins that verb to a clause with a
    subject of its own ("X was not promoted, and Y left": the negation is in
    one conjunct)."""
    for t in sent:
        if not _negative_word(t):
            continue
        scope = t
        while scope.pos_ not in ("VERB", "AUX") and scope.head.i != scope.i:
            scope = scope.head
        if scope.left_edge.i <= token.i <= scope.right_edge.i and not (token.head.i == scope.i and _own_clause(token)):
            if not _in_joined_clause(token.head, scope):
                return True
    return False


def _in_joined_clause(word: Token, scope: Token) -> bool:
    """`word` lies in a clause with a subject of its own joined to the
    negated verb `scope` as its conjunct ("Neither side would comment, and
    the mayor left for A and B"): the negation stays in the first clause."""
    for t in [word, *word.ancestors]:
        if t.i == scope.i:
            return False
        if t.dep_ == "conj" and t.head.i == scope.i and any(c.dep_ in SUBJECT_DEPS for c in t.children):
            return True
    return False


def _own_clause(token: Token) -> bool:
    """The conjunct after the conjunction has a subject of its own: it is a
    clause apart, outside the negated one ("X was not promoted, and Y left";
    not "have not been controlled or repressed", which share "not")."""
    conjuncts = [c for c in token.head.children if c.dep_ == "conj" and c.i > token.i]
    return bool(conjuncts) and any(c.dep_ in SUBJECT_DEPS for c in conjuncts[0].children)


def _downward(head: Token) -> bool:
    """The coordination sits under an operator that makes "and" and "or" say
    the same: a comparison ("than", "exceeded", "unlike"), a negative verb
    ("refused", "denied"), "without", "unless", "before", or a universal or negative
    determiner or pronoun ("any", "no", "all of"). Not "before" as a
    member of the coordination itself ("before and during the war"): it
    names one of the periods, over nothing (the swap makes the time vaguer,
    the protocol's M); "with or without", "unless and until" stay refused."""
    members = {head.i, *(c.i for c in head.conjuncts)}
    for t in [head, *head.ancestors]:
        if t.i in members and t.lower_ in _MEMBER_PERIODS:
            continue
        if _exclusive(t):
            return True
        if t.lower_ in _DOWNWARD_WORDS or _used_as_verb(t) and (t.lemma_.lower() in _COMPARISON_VERBS or t.lemma_.lower() in _NEGATIVE_VERBS):
            return True
        if any(c.dep_ in ("det", "predet") and c.lower_ in _UNIVERSAL_DETERMINERS for c in t.children):
            return True
        if t.lower_ in _UNIVERSAL_DETERMINERS and any(c.lower_ == "of" for c in t.children):
            return True  # "all of its stores on A and B"
    return False


def _exclusive(t: Token) -> bool:
    """`t` is a preposition that excludes its object as a set ("beyond",
    "besides", "except", "apart from", "aside from"; "other than" is
    `_DOWNWARD_WORDS`' "than"). Not "beyond" as an adverb ("in 2030 and
    beyond": a member, not an operator above the coordination)."""
    if t.pos_ not in ("ADP", "SCONJ"):
        return False
    if t.lower_ in _EXCLUSIVE_PREPOSITIONS:
        return True
    return t.lower_ == "from" and (t.head.lower_ in _EXCLUSIVE_FROM or t.i > 0 and t.doc[t.i - 1].lower_ in _EXCLUSIVE_FROM)


def _used_as_verb(t: Token) -> bool:
    """`t` is used as a verb: the verb lists hold words that are also nouns
    or adjectives with no downward sense ("the decline of A and B", "top
    officials"); the downward nouns are coordination_scope's."""
    return t.pos_ in ("VERB", "AUX") or t.tag_.startswith("VB")


def _next_verb_joined(head: Token) -> bool:
    """The verb `head`'s conjuncts are all verbs, and the first comes right
    after its conjunction, over adverbs and auxiliaries only ("met and
    later talked", "divided the land and built houses"), or is a finite
    clause with a subject of its own."""
    conjuncts = head.conjuncts
    if not conjuncts or any(c.pos_ not in ("VERB", "AUX") for c in conjuncts):
        return False
    second = min(conjuncts, key=lambda c: c.i)
    if _finite_clause(second):
        return True  # "the force should be classified, and appointments should be made": a clause of its own
    between = head.doc[head.i + 1 : second.i]
    cc = [t for t in between if t.dep_ == "cc" and t.head.i == head.i]
    return bool(cc) and all(t.pos_ in ("ADV", "AUX", "PART") for t in head.doc[cc[-1].i + 1 : second.i])


def _finite_clause(verb: Token) -> bool:
    """`verb` has a subject of its own and is finite, by its tag or an auxiliary's (not "the minister to confer")."""
    return any(c.dep_ in SUBJECT_DEPS for c in verb.children) and finite_verb(verb)


def _symmetric_argument(head: Token) -> bool:
    """The coordination is an argument of a symmetric verb ("merged A and B"),
    not two verbs, the symmetric one first ("divided the land and built
    houses": two acts, the second verb right after the conjunction). A noun
    hung on the verb as its conjunct ("will meet A for the first time and
    B"), or a second verb further on after a noun phrase ("met with A, and
    the minister of B to confer"), may still be the verb's argument."""
    if head.pos_ in ("VERB", "AUX") and _next_verb_joined(head):
        return False
    token = head
    while token.dep_ == "conj" or token.dep_ in ("pobj", "prep"):
        token = token.head
    verb = token.head if token.dep_ in ("dobj", "pobj", "attr") else token
    return verb.pos_ == "VERB" and joint_verb(verb, "object")
