"""Headings and captions run into a sentence, found in a parsed sentence.

engine.corpus.fused_headings splits a heading off before the parser runs,
where the words before read as one; what it misses stays inside a stored
"sentence" ("... shop in a shopping centre Did we cover it?", "Talks stall
in Geneva Cold war over Syria The envoy said ..."). These tests read the
parsed sentence and say why it is not one clean sentence, or None:

- `opener_after_word(span)`: a word that only opens a sentence (a
  determiner, a conjunction, an adverb, a question's auxiliary, a common
  noun: not a name, a nationality, or an adjective) written capitalised
  right after a lowercase content word, with no punctuation between, and a
  word after it: "... to a new level Factories have ...", "... the border
  The rhetoric ...", "... bringing roads and logging Key findings In Peru,
  ...". Prose capitalises such a word only after a sentence end, so the
  sentence is two pieces run together: engine.corpus.sentence_gate drops it
  (from needles and from hay). So is one with a capitalised opener that
  only starts a sentence by its punctuation after a lowercase word or a
  number: an adverb, a preposition or a conjunction before a comma
  ("... Brexit uncertainties Currently, London ...", "... in 2016
  However, the ...") or a preposition before a number ("... the '50s In
  1955, ...", "... for the ferry From 2019 the ...") or a common noun
  before a comma ("... must be resisted Experience, in our view, ..."); a preposition in a
  title that capitalises every word follows a capitalised word ("Men In
  Black 3") and is not taken.
- `heading_opening(span)`: the sentence opens with a short verbless phrase
  ending in a lowercase word that is not a modifier of what follows (not a
  compound, an adjective, an apposition), then a capitalised word, then a
  finite verb: "The whole picture Neo Rauch takes center stage ...",
  "Occupation of the mind Bannon's ties go back ...". A role before a name
  ("Labour MP Paul Flynn said") is a compound and is not taken, nor is a
  name the parser apposes to a subject that opens the sentence with its
  premodifiers only ("Her eldest daughter Nora Keane has ..."); an
  adverbial opening without a comma ("After the war Johnen studied ...")
  is not taken either, nor a noun that says what the name is, by WordNet's
  class for the name's kind ("his predecessor Barack Obama", "the capital
  Lashkar Gah": engine.needles.name_kind_nouns), a day's name after a noun
  ("A Cork Examiner report Tuesday says": its adverb of time), or a
  contact relative ("The bill Ann drafted was weak", "The last time Ann met
  Tom was in May"). A noun that cannot say what the name is, before a
  possessed name, ends a heading whatever the parse ("Price convergence
  Norway's plan ..."). The reading is ambiguous, so this only refuses the
  sentence as a needle (engine.corpus.sentence_gate.needle_refusals): a
  needle moves to the next sentence, hay keeps it. It also refuses a
  sentence that restates a title run into it, as engine.corpus.fused_headings
  finds one before the parser but without its safeguards for a split (a
  name or a preposition may open the title): "Monetary policy seen as
  prudent China's monetary policy is expected to become more prudent",
  "Ferry firm defends timetable Minister Ann Byrne said the firm's timetable ...",
  and one that opens with a one-word heading, a capitalised common noun
  before the name of a place or a body ("Harbours Cork has long been ...";
  a role before a person's name is prose: "Researcher Ann Walsh said"),
  and one that opens with a gerund heading, a gerund and its object in
  sentence case, run into a person's full name before the finite verb
  ("Holding the fort Ann Walsh was born ...", where the parser hangs the
  object's noun on the name as a modifier; not after a noun that can say
  what a person is: "Meeting the painter Ann Walsh was a thrill"); and
  three more shapes of a heading before the sentence's subject, where
  prose would need a full stop: a headline with a to-infinitive whose verb
  takes no object in WordNet ("Harbour dues to soar Kinsale expects ..."),
  a singular heading with a preposition before a capitalised plural noun
  that a plural verb agrees with ("Extra pay for less Porters also say
  ..."), and a heading ending in a plural noun the parser chains onto the
  subject's noun ("Row over harbour talks Key Cork skippers agreed ...").
  An adjective outside any name may open the subject too ("The harbour
  news Senior pilots have asked ..."), and so may a day's name in the
  possessive, which is no adverb of time ("Rough seas Monday's sailing was
  ..."). Three more: a second subject of the verb opened by a nationality
  right after the heading's noun ("The hidden cost of Cork's ferry strikes
  Irish hauliers have been ..."), a participle headline run into a number
  that opens the subject ("Harbours controlled by private firms 40 percent
  of Irish ports are ..."; not a date or a measure: "... 40 years ago"),
  and a bare heading of a few words whose noun, hung on a place's name,
  says nothing of a place, a group, a person or a time ("Water dispute
  Ireland also plans ..."); and a role written as a capitalised hyphenated
  compound after a heading's noun, before a person's name ("Risks of late
  filing Co-pilot Ann Walsh told ..."). A nationality of more than one
  word right after a heading's noun is no modifier of it ("... on the
  table Outgoing Irish minister Ann Walsh welcomed": the tagger took the
  heading's next word into the nationality).
- `headline_before_subject(span)`: a headline run into a sentence whose
  subject is a person's name, where the parse shows two clauses that
  nothing joins: a present-tense headline clause, then a name (a role may
  stand before it) and a past-tense verb heading the sentence, with no
  punctuation, conjunction or subordinator between ("Dublin gears up for
  the Easter Parade Mayor Tom Byrne pledged ..."; a present tense in a
  past report is a headline's); a headline's attribution, a bare
  singular noun and "says", right before a name ("Farmers have this figured out, tariff critic says Ann Walsh, who
  ..."; prose gives the noun an article: "The critic says Ann ..."); or a
  name premodified by a noun under the negative determiner "no" ("No
  clear agenda Ann Walsh, a lecturer, said ...": a role before a name
  names what the person is, never what they are not). "The mayor says Tom
  pledged", "Ann and her brother Tom said", ", says Ann Walsh" and a
  contact relative clause ("the plan Tom drafted was weak") are prose and
  not taken. Needles only (engine.corpus.sentence_gate.needle_refusals):
  the sentence may be prose the parser read wrongly, so it moves the
  needle on and hay keeps it.
- `heading_inside(span)`: a caption or a subheading run into the middle of
  a sentence: a clause ends on a lowercase word with no punctuation ("...
  something humans hold against them"), a capitalised word that is no name
  opens a short run of lowercase words with no finite
  verb ("Warming beaver-human relations"), and a capitalised word after
  that run, which ends on a common noun, opens a clause with a finite verb
  ("Biologist Ann Walsh told ..."; prose runs into a name after a
  preposition or a determiner: "every day Trump spends in Florida"). The
  first capital, never an adjective ("other Russian officials"), may
  follow a pronoun, where `opener_after_word` waits for a content word, and
  may be tagged a proper noun (one outside an entity) or an entity (one
  tagged as a common word): what gives the
  heading away is the lowercase run closed by a second capital, which
  prose writes only after a sentence end. A capital after a determiner, a
  possessive, a preposition or a conjunction opens a title ("a report on
  Warming seas") and is not taken. Needles only, as `heading_opening`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from engine.corpus.fused_headings import CLAUSE_OPENING_TAGS, FINITE_TAGS, MIN_RESTATED, content_stem
from engine.needles.name_kind_nouns import (
    GROUP_FIRST_NOUNS,
    GROUP_NOUNS,
    PERSON_FIRST_NOUNS,
    PERSON_NOUNS,
    PLACE_FIRST_NOUNS,
    PLACE_NOUNS,
    TIME_NOUNS,
)

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

MAX_HEADING_TOKENS = 12
MAX_RESTATED_TOKENS = 20
RESTATED_WITHIN = 15
HAY_RESTATED_WITHIN = 25
_FUNCTION_TAGS = frozenset({"IN", "TO", "DT", "PDT", "PRP$", "POS", "WDT", "WP", "WP$", "CC", "EX", "MD"})
_NAME_TYPES = frozenset({"PERSON", "GPE", "ORG", "LOC", "FAC", "NORP", "WORK_OF_ART", "LAW", "EVENT", "PRODUCT", "LANGUAGE"})
# what a word modifying the next one is (a role before a name, an adjective)
_MODIFIER_DEPS = frozenset({"compound", "amod", "nmod", "appos", "nummod", "poss"})
_PLACE_OR_BODY_TYPES = frozenset({"GPE", "LOC", "FAC", "ORG", "NORP"})
_PLACE_TYPES = frozenset({"GPE", "LOC"})
MAX_BARE_HEADING_TOKENS = 3  # a bare heading before a place's name ("Water dispute")
_PROSE_FINITE_TAGS = frozenset({"VBD", "MD"})  # a headline's verbs are in the present
_STOPS = frozenset('"\u201c\u201d()[]:;')
# the common nouns that can say what a name of each kind is (WordNet's classes, engine.needles.name_kind_nouns):
# (any sense of the kind, the first sense of the kind)
_KIND_NOUNS = {
    "PERSON": (PERSON_NOUNS, PERSON_FIRST_NOUNS),
    "GPE": (PLACE_NOUNS | GROUP_NOUNS, PLACE_FIRST_NOUNS | GROUP_FIRST_NOUNS),
    "LOC": (PLACE_NOUNS | GROUP_NOUNS, PLACE_FIRST_NOUNS | GROUP_FIRST_NOUNS),
    # a team or a firm as its people: "champions Chelsea", "hosts Russia"
    "ORG": (GROUP_NOUNS | PERSON_NOUNS, GROUP_FIRST_NOUNS | PERSON_FIRST_NOUNS),
    "NORP": (GROUP_NOUNS | PERSON_NOUNS, GROUP_FIRST_NOUNS | PERSON_FIRST_NOUNS),
}
# names of a day or a time: after a noun they are its adverb of time ("a report Tuesday says")
_TIME_TYPES = frozenset({"DATE", "TIME"})


def _content_word_before(token: Token) -> bool:
    """The token follows a lowercase content word and a space."""
    before = token.doc[token.i - 1]
    return (
        bool(before.whitespace_)
        and before.is_lower
        and before.is_alpha
        and before.tag_ not in _FUNCTION_TAGS
        and not before.is_stop
    )


def _capitalised(token: Token) -> bool:
    return token.text[:1].isupper() and token.is_alpha and token.text != "I"


_OPENER_TAGS = frozenset({"RB", "RBR", "RBS", "IN", "CC", "WRB"})  # "Currently,", "In 1955,", "But,"


def _lowercase_or_number_before(token: Token) -> bool:
    """The token follows, after a space, a lowercase word or a number ("uncertainties", "'50s", "2016")."""
    before = token.doc[token.i - 1]
    if not before.whitespace_ or before.is_punct:
        return False
    return (before.is_lower and any(c.isalpha() for c in before.text)) or before.like_num or (
        any(c.isdigit() for c in before.text) and not any(c.isupper() for c in before.text)
    )


def _opener_by_punctuation(token: Token, after: Token) -> bool:
    """An adverb, a preposition or a conjunction before a comma, or a
    preposition before a number, after a lowercase word or a number (module
    docstring)."""
    if token.tag_ not in _OPENER_TAGS or not _lowercase_or_number_before(token):
        return False
    return after.text == "," or (token.tag_ == "IN" and after.like_num)


def opener_after_word(span: Span) -> Token | None:
    """The capitalised word that starts a second sentence inside `span`, or None (module docstring)."""
    doc = span.doc
    for token in span[1:-1]:
        after = doc[token.i + 1]
        if not (token.is_title and _capitalised(token) and len(token.text) > 1 and (token.whitespace_ or after.text == ",")):
            continue  # a whole word: "Cant" is tokenized "Ca" + "nt", as "can't"
        if token.tag_ in ("NNP", "NNPS", "JJ") or token.ent_type_ in _NAME_TYPES:
            continue
        if _opener_by_punctuation(token, after) or _noun_opener_before_comma(token, after, span.start):
            return token
        if not token.whitespace_ or not after.is_alpha or not _content_word_before(token):
            continue
        if token.tag_ == "DT" and (after.tag_ in ("NNP", "NNPS") or after.is_title):
            continue  # "his trilogy The Heart of the Galaxy": a title of a work
        return token
    return None


def _noun_opener_before_comma(token: Token, after: Token, start: int) -> bool:
    """A capitalised common noun, not in a name, before a comma, after a
    lowercase content word: "... must be challenged Experience, including
    ...". Prose writes a common noun capitalised only at a sentence start,
    save old prose's capitalised nouns, which words before them modify
    ("the larger States, and", "foreign Governments, through"). Words before
    it that open the sentence (`start`) without a determiner or a possessive
    are a heading the parser hung on it ("Alarming radicalization Humans,
    the author says, ..."): old prose's noun phrase has its article."""
    if token.tag_ not in ("NN", "NNS") or token.ent_type_ or after.text != "," or not _content_word_before(token):
        return False
    if not any(child.i < token.i for child in token.children):
        return True
    opening = token.doc[start : token.i]
    return token.left_edge.i == start and not any(t.tag_ in ("DT", "PDT", "PRP$", "POS", "WDT", "WP$") for t in opening)


def _modifies(before: Token, token: Token, start: int) -> bool:
    """`before` and the name at `token` are one phrase: a role or a kin word
    before a name ("Labour MP Paul Flynn", "my wife Coco"), either way round;
    `start`: where the sentence opens."""
    if before.dep_ in _MODIFIER_DEPS or token.head.i == before.i:
        return True
    head = before.head
    return (token.i <= head.i < token.i + 4 and head.tag_ in ("NNP", "NNPS")) or _apposed_to_opening(before, token, start)


def _apposed_to_opening(noun: Token, token: Token, start: int) -> bool:
    """The name at `token` is an apposition of `noun` (or of the first of
    coordinated roles `noun` closes: "Party lawmaker and former minister Ann
    Walsh told ..."), and the sentence opens with that noun's own phrase, its
    premodifiers only ("Her eldest daughter Nora Keane has ..."): the parser
    read the opening and the name as one subject. A heading run into a name
    leaves the name a subject of its own ("The long view Nora Keane has
    ...": two subjects), or a phrase with a preposition before it ("Damage
    at the quay Harbour master Tom Byrne ..."); and where the parser apposes
    the name to a heading all the same, the heading's noun is no subject
    ("The whole picture Neo Rauch as a person takes ...": "picture" is the
    root), or the heading holds a word taken for a proper noun that names
    nothing, a link's verb ("Read Ann's full blog Tom Byrne, ... said")."""
    name = token
    while name.dep_ == "compound" and name.head.i > name.i and name.head.ent_iob_ == "I":
        name = name.head
    head = noun
    while head.dep_ == "conj" and head.head.i < head.i:
        head = head.head
    if name.dep_ != "appos" or name.head.i != head.i or head.dep_ not in ("nsubj", "nsubjpass"):
        return False
    opening = token.doc[start : noun.i]
    return head.left_edge.i == start and all(
        (t.i == head.i or t.dep_ in _PREMODIFIER_DEPS or (t.head.i == head.i and t.dep_ in ("cc", "conj")))
        and (t.tag_ not in ("NNP", "NNPS") or t.ent_type_)
        for t in opening
    )


_PREMODIFIER_DEPS = frozenset({"det", "poss", "amod", "compound", "nummod", "advmod", "case", "predet"})  # "Her eldest", "Ann's"


def heading_opening(span: Span, *, hay: bool = False) -> bool:
    """Whether `span` opens with a heading run into it (module docstring).
    `hay`: the over-refusing form engine.corpus.hay_check reads, where
    refusing prose costs little: also where the word before the name is a
    plural common noun the parser hung on it ("... hopes for peace talks De
    Mistura said ..."; a role or a kin word before one name is singular, a
    group such as "the brothers Ann and Tom" is taken too), and where the
    words before hold a verb in the present, as a headline's do ("Refugee
    influx and attacks increase opposition Acme Polls also found ..."; a
    past tense or a modal is prose's)."""
    return (
        _verbless_heading_before_name(span, hay)
        or _gerund_heading_before_name(span)
        or _infinitive_headline_before_subject(span)
        or _plural_subject_after_singular_heading(span)
        or _plural_noun_heading_before_subject(span)
        or _nationality_subject_after_heading(span)
        or _participle_headline_before_number(span)
        or _hyphenated_role_after_heading(span)
        or _restated_heading(span, hay)
        or _one_word_heading_before_place(span)
    )


def _restated_heading(span: Span, hay: bool = False) -> bool:
    """A title the sentence restates at once: where a capitalised word
    follows a lowercase word within the first MAX_RESTATED_TOKENS, at least
    two lowercase content words before it, and a third of them, come back in
    the RESTATED_WITHIN words after it (a name restated is a topic, not a
    title: "Penn State ... Penn State"). `hay`: the heading's first word
    counts too when it is a common noun ("Scientists find ... Chinese
    scientists say ..."), and the words after reach HAY_RESTATED_WITHIN
    (an apposition can stand between: "... dismissed Ann Walsh, head of
    the ... board, has dismissed ...")."""
    # not a word of a hyphenated compound ("27-year-old ... 35-year-old": a form, not a title restated)
    stems = [None if _hyphenated(t) else content_stem(t) for t in span]
    heading: set[str] = set()
    if hay and stems[0] and span[0].tag_ in ("NN", "NNS"):
        heading.add(stems[0])
    within = HAY_RESTATED_WITHIN if hay else RESTATED_WITHIN
    for k in range(1, min(len(span) - 1, MAX_RESTATED_TOKENS + 1)):
        before = span[k - 1]
        if before.is_quote or before.text in _STOPS:
            return False
        if stems[k - 1] and before.is_lower:
            heading.add(stems[k - 1])
        if len(heading) < MIN_RESTATED or not (_capitalised(span[k]) and _content_word_before(span[k])):
            continue
        # restated in lowercase: a name that holds the words ("... women to mark International Women's Day") is a topic
        rest = {stem for stem, t in zip(stems[k : k + within], span[k : k + within]) if stem and t.is_lower}
        restated = len(heading & rest)
        if restated >= MIN_RESTATED and 3 * restated >= len(heading):
            return True
    return False


def _hyphenated(token: Token) -> bool:
    doc = token.doc
    return (token.i > 0 and doc[token.i - 1].tag_ == "HYPH") or (token.i + 1 < len(doc) and doc[token.i + 1].tag_ == "HYPH")


def _verbless_heading_before_name(span: Span, hay: bool = False) -> bool:
    doc = span.doc
    for token in span[1 : min(len(span) - 1, MAX_HEADING_TOKENS + 1)]:
        before = doc[token.i - 1]
        if before.is_quote or before.text in _STOPS:
            return False
        if not _capitalised(token) or not _content_word_before(token) or before.tag_.startswith("VB"):
            continue
        if ((token.tag_ == "JJ" and token.ent_type_) or token.ent_type_ in ("NORP", "LANGUAGE")) and not _opens_a_nationality_after_noun(token):
            continue  # "other Russian officials"; an adjective outside a name opens a subject: "... blog Former leader Ann"
        if token.ent_type_ in _TIME_TYPES and not _possessed(token):
            continue  # "a report Tuesday says": its adverb of time; "... tensions Friday's clash was ..." is none
        kind = _kind_before_name(before, token, span.start)
        if kind is True:
            continue  # "his predecessor Barack Obama", "the provincial capital Lashkar Gah"
        if kind is None and _modifies(before, token, span.start) and not (hay and before.tag_ == "NNS"):
            continue
        if _contact_relative(before, token):
            return False
        prefix = doc[span.start : token.i]
        if prefix[0].tag_ in CLAUSE_OPENING_TAGS and not any(t.text == "," for t in prefix):
            return False  # "After the war Johnen studied ...": an adverbial, then the subject
        if any(t.tag_ in (_PROSE_FINITE_TAGS if hay else FINITE_TAGS) for t in prefix):
            return False
        return any(t.tag_ in FINITE_TAGS for t in doc[token.i : span.end])
    return False


def _opens_a_nationality_after_noun(token: Token) -> bool:
    """`token` opens a nationality of more than one word right after a
    lowercase common noun: "... on the table Outgoing Irish minister
    ...", where the tagger took a heading's next word into the nationality.
    A nationality after an adjective ("other Russian officials", "young
    Latin American voters") is the adjective's noun phrase; the caller asks
    for a verbless opening too."""
    doc = token.doc
    if token.ent_type_ != "NORP" or token.ent_iob_ != "B" or token.i + 1 >= len(doc) or doc[token.i + 1].ent_iob_ != "I":
        return False
    return doc[token.i - 1].tag_ in ("NN", "NNS")


# what a gerund heading holds between its gerund and the name: its object's words, no preposition or clause
_GERUND_OBJECT_TAGS = frozenset({"DT", "PDT", "PRP$", "JJ", "JJR", "JJS", "NN", "NNS", "CD", "RB", "RP"})


def _gerund_heading_before_name(span: Span) -> bool:
    """A gerund heading in sentence case, a gerund and its object with no
    preposition ("Holding the fort"), run into a person's full name that the
    sentence's finite verb follows: "Holding the fort Ann Walsh was born
    ...". The parser reads the name as the gerund's object and the word
    before it as the name's modifier (a compound, an adjective), which
    `_verbless_heading_before_name` takes for a role. A noun that can say
    what a person is keeps the reading of a gerund subject ("Meeting the
    painter Ann Walsh was a thrill"); an adverbial opening has a preposition
    ("Speaking to reporters Ann Walsh said") and is not taken. An adjective
    before the name ("Meeting the legendary Ann Walsh was a thrill") is
    taken: the reading is ambiguous, and this only refuses a needle."""
    doc, gerund = span.doc, span[0]
    if gerund.tag_ != "VBG" or not gerund.is_title or gerund.ent_type_ or len(span) < 5:
        return False
    if gerund.dep_ in _MODIFIER_DEPS:
        return False  # a participle modifying a noun: "Ruling party newspaper Rodong Sinmun said"
    k = span.start + 1
    while k < span.end and k - span.start <= MAX_HEADING_TOKENS and doc[k].is_lower and doc[k].is_alpha:
        if doc[k].tag_ not in _GERUND_OBJECT_TAGS:
            return False
        k += 1
    if k == span.start + 1 or k >= span.end - 2:
        return False
    name = doc[k]
    if not (_capitalised(name) and name.ent_iob_ == "B" and name.ent_type_ == "PERSON" and doc[k + 1].ent_iob_ == "I"):
        return False  # a full name: a single capitalised word may be a title's ("Keeping the Faith")
    before = doc[k - 1]
    if not _content_word_before(name) or {before.lemma_.lower(), before.lower_} & PERSON_NOUNS:
        return False
    end = k + 1
    while end + 1 < span.end and doc[end + 1].ent_iob_ == "I":
        end += 1
    verb = end + 1
    while verb < span.end and doc[verb].tag_ in ("RB", "RBR"):
        verb += 1
    return verb < span.end and doc[verb].tag_ in FINITE_TAGS


# verbs that take no object or complement in any WordNet sense ("rise", "soar"): scripts/derive_no_object_verbs.py
_NO_OBJECT_VERBS = frozenset(
    json.loads(Path(__file__).with_name("no_object_verbs.json").read_text(encoding="utf-8"))["VERBS"]
)
# what may stand in the phrase a capitalised word opens before its verb: names, nouns, adjectives ("Key EU figures")
_SUBJECT_PHRASE_TAGS = frozenset({"NNP", "NNPS", "NN", "NNS", "JJ", "HYPH", "POS"})
_SUBJECT_PHRASE_TOKENS = 4


def _finite_verb_after_phrase(token: Token, end: int) -> bool:
    """A finite verb follows the phrase `token` opens (a few capitalised
    words, nouns or adjectives, then adverbs) before `end`: the phrase is
    its subject."""
    doc = token.doc
    k = token.i + 1
    while (
        k < end
        and k - token.i <= _SUBJECT_PHRASE_TOKENS
        and doc[k].tag_ not in FINITE_TAGS
        and (_capitalised(doc[k]) or doc[k].tag_ in _SUBJECT_PHRASE_TAGS or doc[k].ent_iob_ == "I")
    ):
        k += 1
    while k < end and doc[k].tag_ in ("RB", "RBR"):
        k += 1
    return k < end and doc[k].tag_ in FINITE_TAGS


def _verbless_run(span: Span, stop: int) -> bool:
    """The words of `span` before `stop` are words or hyphens, with no finite
    verb and no other punctuation: a heading's, in sentence case (the first
    word capitalised, no clause-opening word: not "To ...", "In ...")."""
    first = span[0]
    if not _capitalised(first) or first.tag_ in CLAUSE_OPENING_TAGS:
        return False
    return all((t.is_alpha or t.tag_ == "HYPH") and t.tag_ not in FINITE_TAGS for t in span.doc[span.start : stop])


def _infinitive_headline_before_subject(span: Span) -> bool:
    """A headline of a noun phrase and a to-infinitive ("Harbour dues to
    soar") run into a capitalised word that opens the subject of a finite
    verb: "Harbour dues to soar Kinsale expects to pay ...". The
    infinitive's verb takes no object or complement in any WordNet sense
    (`_NO_OBJECT_VERBS`), so the capitalised word cannot be its object, as a
    name is in prose ("Plans to visit Cork were shelved"); a day or a
    date after it is its adverb ("The plan to arrive Monday was dropped")."""
    doc = span.doc
    for k in range(span.start + 1, min(span.end - 3, span.start + MAX_HEADING_TOKENS)):
        if doc[k].tag_ != "TO":
            continue
        verb, token = doc[k + 1], doc[k + 2]
        if verb.tag_ != "VB" or not verb.is_lower or verb.lemma_.lower() not in _NO_OBJECT_VERBS or not verb.whitespace_:
            return False
        if not _capitalised(token) or token.ent_type_ in _TIME_TYPES or not _verbless_run(span, k):
            return False
        return _finite_verb_after_phrase(token, span.end)
    return False


def _plural_subject_after_singular_heading(span: Span) -> bool:
    """A heading of a singular noun and a preposition ("Extra pay for
    less") run into a capitalised plural common noun that opens the sentence:
    "Extra pay for less Porters also say their shifts have grown". The
    verb after that noun agrees only with it (a present tense for a plural,
    or "were"), not with the opening's singular noun, so the noun is the
    verb's subject, which a preposition cannot govern; its capital, which
    prose gives a common noun only at a sentence start, says the same. A
    noun under "of" may set a plural verb ("A third of Voters say") and is
    not taken, nor a nationality or a name ("Support for Democrats").
    Needles only: prose with a slip of agreement would be refused too."""
    doc = span.doc
    for token in span[2 : MAX_HEADING_TOKENS + 1]:
        if not (_capitalised(token) and token.is_title and token.tag_ in ("NNS", "NNPS")):
            continue
        if token.ent_type_ in ("NORP", "PERSON", "GPE") or not _lowercase_or_number_before(token):
            return False
        opening = doc[span.start : token.i]
        if not _verbless_run(span, token.i) or any(t.tag_ in ("NNS", "NNPS", "CC") or t.lower_ == "of" for t in opening):
            return False
        if not any(t.tag_ == "NN" for t in opening) or not any(t.tag_ == "IN" for t in opening):
            return False
        k = token.i + 1
        while k < span.end and doc[k].tag_ in ("RB", "RBR"):
            k += 1
        return k < span.end and (doc[k].tag_ == "VBP" or doc[k].lower_ == "were")
    return False


def _plural_noun_heading_before_subject(span: Span) -> bool:
    """A heading of a noun and a preposition's phrase ending in a plural
    noun ("Row over harbour talks"), run into a capitalised word that opens
    the subject of a finite verb, where the parser chains the plural noun
    onto the subject's lowercase noun as its modifier: "Row over harbour
    talks Key Cork skippers agreed to ...". Prose puts a plural noun before
    a capitalised word inside one noun phrase without a preposition before
    it ("Foreign affairs Committee members agreed"); the tagger may read
    the plural noun as a present-tense verb ("talks")."""
    doc = span.doc
    for token in span[3 : MAX_HEADING_TOKENS + 1]:
        before = doc[token.i - 1]
        if not _capitalised(token) or token.ent_type_ == "PERSON":
            continue
        if not (before.is_lower and before.is_alpha and before.whitespace_ and before.lower_.endswith("s")):
            continue
        subject = before.head
        if before.tag_ not in ("NNS", "VBZ") or before.dep_ != "compound" or subject.i <= token.i:
            continue
        if not (subject.is_lower and subject.tag_ in ("NN", "NNS") and subject.dep_ in ("nsubj", "nsubjpass")):
            continue
        if subject.head.tag_ not in FINITE_TAGS or subject.head.i < subject.i:
            continue
        opening = doc[span.start : before.i]
        return _verbless_run(span, before.i) and any(t.tag_ == "IN" for t in opening)
    return False


def _nationality_subject_after_heading(span: Span) -> bool:
    """A finite verb with two subjects before it, the first opening the
    sentence, the second's phrase opening with a nationality (NORP) right
    after the first's lowercase noun, no punctuation or conjunction between:
    "The hidden cost of Cork's ferry strikes Irish hauliers have been
    forced ...". A verb takes one subject, and a nationality does not follow
    a noun inside one phrase; prose that runs a noun into a nationality
    ("The hauliers Irish ports turned away ...") makes a relative clause,
    one subject for each verb. A nationality before a noun is skipped by
    `_verbless_heading_before_name` ("other Russian officials")."""
    doc = span.doc
    for verb in span:
        subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass") and c.i < verb.i]
        finite = verb.tag_ in FINITE_TAGS or any(c.dep_ in ("aux", "auxpass") and c.tag_ in FINITE_TAGS for c in verb.children)
        if len(subjects) < 2 or not finite:
            continue
        first, second = subjects[0], subjects[-1]
        opener = second.left_edge
        if first.left_edge.i != span.start or opener.i <= first.right_edge.i or opener.i - span.start > MAX_HEADING_TOKENS:
            continue
        if opener.ent_type_ != "NORP" or opener.ent_iob_ != "B" or not _capitalised(opener) or not _content_word_before(opener):
            continue
        if doc[opener.i - 1].tag_ not in ("NN", "NNS"):
            continue
        words = doc[span.start : opener.i]
        if not any(t.is_punct and t.text not in "-'\u2019" or t.tag_ == "CC" for t in words):
            return True
    return False


def _hyphenated_role_after_heading(span: Span) -> bool:
    """A verbless heading in sentence case run into a role written as a
    hyphenated compound with a capital ("Co-author"), whose last word is a
    person's noun (WordNet, engine.needles.name_kind_nouns), before a person's
    name: "Risks of late filing Co-pilot Ann Walsh told ...". Prose writes
    such a role lowercase after a noun ("the study's co-author Ann Walsh");
    the capital opens the sentence. The heading may end in a gerund
    ("Risks of underreporting") unless the name is its object ("Risks of
    meeting Co-author Ann Walsh are small": a title before a name).
    `opener_after_word` skips the first part, a word cut by its hyphen."""
    doc = span.doc
    for token in span[2 : MAX_HEADING_TOKENS + 1]:
        if token.i + 3 >= span.end or not (_capitalised(token) and token.is_title and len(token.text) > 1):
            continue
        hyphen, word, name = doc[token.i + 1], doc[token.i + 2], doc[token.i + 3]
        if token.whitespace_ or hyphen.text != "-" or hyphen.whitespace_ or not (word.is_lower and word.is_alpha):
            continue
        before = doc[token.i - 1]
        if not _content_word_before(token) or before.tag_ not in ("NN", "NNS", "VBG") or not _verbless_run(span, token.i):
            return False
        person = name
        while person.dep_ == "compound" and person.head.i > person.i:
            person = person.head
        if before.tag_ == "VBG" and person.head.i == before.i:
            return False  # the name is the gerund's object: "Risks of meeting Co-author Ann Walsh are small"
        return word.lower_ in PERSON_NOUNS and name.ent_type_ == "PERSON" and name.ent_iob_ == "B"
    return False


# what a measure phrase ("40 percent", "ten years") may measure after it: "faster", "older", "ago"
_MEASURED_TAGS = frozenset({"JJ", "JJR", "JJS", "RB", "RBR", "RBS"})


def _participle_headline_before_number(span: Span) -> bool:
    """A headline of a bare noun and a past participle hung on it
    ("Harbours controlled by private firms"), run into a number after a
    lowercase noun, with a finite verb after the number: "Harbours
    controlled by private firms 40 percent of Irish ports are ...". A number
    right after the participle's phrase opens the next clause's subject;
    prose puts one there only as a date or a time ("... by private firms 40
    years ago were ...", which the entity tagger marks) or as a measure of
    an adjective or an adverb after it ("Boats built by hand 40 percent
    faster ..."). The tagger may take the heading's last noun for a verb
    ("cartels" as VBZ)."""
    doc = span.doc
    first, participle = span[0], span[1] if len(span) > 1 else None
    if participle is None or not _capitalised(first) or first.tag_ not in ("NN", "NNS", "NNP") or first.ent_type_:
        return False
    if participle.tag_ != "VBN" or participle.dep_ != "acl" or participle.head.i != first.i:
        return False
    for token in span[3 : MAX_HEADING_TOKENS + 1]:
        before = doc[token.i - 1]
        if token.is_punct or token.tag_ == "CC":
            return False
        if not token.like_num:
            continue
        if not (before.is_lower and before.is_alpha and before.whitespace_ and before.tag_ in ("NN", "NNS", "VBZ")):
            return False
        measured = token.head if token.dep_ == "nummod" and token.head.i > token.i else token
        if token.ent_type_ in _TIME_TYPES or (measured.i + 1 < span.end and doc[measured.i + 1].tag_ in _MEASURED_TAGS):
            return False  # "... by hand 40 percent faster": a measure of the word after it
        return any(t.tag_ in FINITE_TAGS for t in doc[token.i + 1 : span.end])
    return False


def _kind_before_name(before: Token, token: Token, start: int | None = None) -> bool | None:
    """Whether the common noun `before` can say what the name at `token` is
    (a person, a place, a group: "his predecessor Barack Obama", "tech firm
    Apple", "the capital Lashkar Gah"): True if WordNet's first sense of it
    is a person and the name a person's, False if no sense is of the name's
    kind and the name is possessed ("Currency
    convergence China's journey ...": a heading, whatever the parser hangs
    on what; a word WordNet lacks too, as a needle abstains), None when that
    cannot be told (not a singular common noun, a name of no kind the tables
    hold, a possessed name after a noun of its kind). `start`: where the
    sentence opens, for a place's bare heading (`_bare_heading_before_place`)."""
    if token.ent_type_ not in _KIND_NOUNS or before.tag_ != "NN" or not before.is_lower or before.dep_ == "amod":
        return None
    if before.lower_.endswith("ing"):
        return None  # a participle the tagger took for a noun: "in neighbouring Honduras"
    doc = before.doc
    left = doc[before.i - 1] if before.i > 0 else None
    if left is not None and left.tag_ == "HYPH":
        return None  # "three-time": a modifier made of a phrase
    if left is not None and _capitalised(left) and _content_word_before(left):
        return None  # "... the old quay Harbour master Tom Byrne said": the role opens the sentence run on
    words = {before.lemma_.lower(), before.lower_}
    if left is not None and left.is_lower and left.is_alpha:
        words |= {f"{left.lower_}_{w}" for w in words}  # "think tank"
    can_be, mostly_is = _KIND_NOUNS[token.ent_type_]
    if words & mostly_is:
        # a noun whose first sense is of the kind ("brother"; not "center", a place first, a player last), before a
        # person's name (the tagger's other kinds are looser: "front and center Navalny", GPE), and not in a
        # coordination of nouns; not before a possessed name ("Something on his mind Trump's plan ...": a heading's
        # last word), nor where the parse makes the noun and the name two subjects of one verb: two phrases
        if token.ent_type_ != "PERSON" or before.dep_ == "conj" or _possessed(token) or _two_subjects(before, token):
            return None
        return True
    if words & can_be:
        return None
    # a noun of another kind: a heading's last word before a possessed name ("... convergence China's journey");
    # before a bare name engine.corpus.parsed_headings reads the heading ("Quiet heroism Walsh, ..."), save a
    # place's after a bare opening phrase (`_bare_heading_before_place`)
    if _possessed(token) or _bare_heading_before_place(before, token, start):
        return False
    return None


def _bare_heading_before_place(before: Token, token: Token, start: int | None) -> bool:
    """The sentence opens with a bare phrase of a few content words ending
    in the noun `before`, hung on the place's name at `token` as a modifier,
    and the noun can say nothing of a place, a group or a person (a country
    as its team: "Tournament favourites India"), nor a time: "Water dispute
    Ireland also plans ...". A place takes no premodifying common noun in
    prose but its kind ("the capital Dublin", `_kind_before_name`) or a time
    ("Last week Ireland ...")."""
    if start is None or token.ent_type_ not in _PLACE_TYPES or before.dep_ != "compound" or before.head.i < token.i:
        return False
    if {before.lemma_.lower(), before.lower_} & (PERSON_NOUNS | TIME_NOUNS) or before.i - start >= MAX_BARE_HEADING_TOKENS:
        return False
    opening = before.doc[start : before.i + 1]
    # the first word in sentence case (the tagger may take it for a name: "Dam" as ORG), the others lowercase
    return _capitalised(opening[0]) and all(
        t.is_alpha and t.tag_ not in _FUNCTION_TAGS and (t.i == start or t.is_lower) for t in opening
    )


def _two_subjects(before: Token, token: Token) -> bool:
    """The phrase of `before` and the name at `token` are both subjects of one verb."""
    noun, name = before, token
    while noun.dep_ in ("compound", "conj") and noun.head.i != noun.i:
        noun = noun.head
    while name.dep_ == "compound" and name.head.i > name.i:
        name = name.head
    subjects = ("nsubj", "nsubjpass")
    return noun.dep_ in subjects and name.dep_ in subjects and noun.head.i == name.head.i


def _possessed(token: Token) -> bool:
    """The name that starts at `token` ends in a possessive "'s"."""
    doc, end = token.doc, token.i
    while end + 1 < len(doc) and doc[end + 1].ent_iob_ == "I":
        end += 1
    return end + 1 < len(doc) and doc[end + 1].tag_ == "POS"


def _contact_relative(before: Token, token: Token) -> bool:
    """The noun `before` and the name after it are prose's: the name is the
    subject of a relative clause without "that" on the noun, itself the
    subject of a verb after it ("The bill Ann drafted was weak"), or of
    the verb that takes the noun phrase as its adverb of time ("The last time
    Ann met Tom was in May": a noun of time, engine.needles.name_kind_nouns,
    with a determiner or an adjective; not "The long view Nora Keane has ...")."""
    name = token
    while name.dep_ == "compound" and name.head.i > name.i:
        name = name.head
    if name.dep_ not in ("nsubj", "nsubjpass"):
        return False
    verb = name.head
    if verb.dep_ == "relcl" and verb.head.i == before.i and before.dep_ in ("nsubj", "nsubjpass") and before.head.i > verb.i:
        return True
    return (
        before.dep_ == "npadvmod"
        and before.head.i == verb.i
        and before.lemma_.lower() in TIME_NOUNS
        and any(c.dep_ in ("det", "amod") for c in before.children)
    )


def _one_word_heading_before_place(span: Span) -> bool:
    """A one-word section heading, a capitalised common noun outside any
    name, before a sentence that opens with a place or a body: "Harbours
    Cork has long been ...". A common noun does not premodify a place's
    name in prose; a role before a person's name does ("Researcher Ann
    Walsh said"), so a person's name is not taken, and a singular role
    before a firm's ("Shipbuilder Harland said", which the tagger may read
    as a place), so the heading must be a plural noun ("Weapons", "Tariffs")."""
    if len(span) < 4:
        return False
    first, name = span[0], span[1]
    # the tests on the two tokens first; `_written_lowercase` walks the whole Doc, so it comes last
    return (
        first.tag_ in ("NNS", "NNP")
        and first.is_title
        and not first.ent_type_
        and name.ent_iob_ == "B"
        and name.ent_type_ in _PLACE_OR_BODY_TYPES
        and name.is_title
        and any(t.tag_ in FINITE_TAGS for t in span[2:])
        and (first.tag_ == "NNS" or _written_lowercase(first))
    )


def _written_lowercase(token: Token) -> bool:
    """The document also writes the word lowercase as a plural noun: a common
    noun the tagger took for a name at a sentence start ("Tariffs Canada has
    ...", "... the tariffs on timber"), not an adverb or a title ("Whilst
    Congress", "President Adams")."""
    lower = token.lower_
    return any(t.text == lower and t.tag_ == "NNS" for t in token.doc if t.i != token.i)


_ARTICLE_DEPS = frozenset({"det", "poss", "nummod", "predet"})


def headline_before_subject(span: Span) -> bool:
    """Whether a headline runs into `span` before a person's name that is a
    subject (module docstring)."""
    return (
        _present_headline_before_past_clause(span)
        or _negated_role_before_name(span)
        or _headline_attribution_before_name(span)
    )


def _negated_role_before_name(span: Span) -> bool:
    """The sentence opens "No <adjectives> <noun> <Name>", the noun hung on
    the name, and the name is followed by a comma or the sentence's verb
    (a noun before a name that heads a contact relative clause is prose:
    "No other singer Ann Walsh admired sold more", "There was no answer
    Ann could give")."""
    doc = span.doc
    token = span[0]
    if token.lower_ != "no" or token.dep_ != "det":
        return False
    k = token.i + 1
    while k < span.end and doc[k].tag_ in ("JJ", "NN", "NNS") and not doc[k].ent_type_:
        k += 1
    if k == span.end or doc[k - 1].tag_ not in ("NN", "NNS"):
        return False
    noun, name = doc[k - 1], doc[k]
    if name.ent_type_ != "PERSON" or name.ent_iob_ != "B" or noun.dep_ != "compound" or noun.head.ent_type_ != "PERSON":
        return False
    if token.head.i not in (noun.i, noun.head.i):
        return False
    end = k
    while end + 1 < span.end and doc[end + 1].ent_iob_ == "I":
        end += 1
    # the name, then an apposition or the sentence's verb; not "No other singer Ann admired sold ..."
    return end + 1 < span.end and (doc[end + 1].text == "," or end + 1 == span.root.i)


def _headline_attribution_before_name(span: Span) -> bool:
    """A headline's attribution, "<noun> says" with a bare singular common
    noun as its subject, right before a person's name: "Obamacare critic
    says Becky ..." (prose gives a singular count noun an article or a
    possessive: "The critic says Ann Walsh is wrong", "Ann's doctor says")."""
    doc = span.doc
    for verb in span[1 : MAX_HEADING_TOKENS + 1]:
        if verb.lower_ != "says" or verb.i + 1 >= span.end:
            continue
        noun, name = doc[verb.i - 1], doc[verb.i + 1]
        if noun.tag_ != "NN" or noun.dep_ != "nsubj" or noun.head.i != verb.i or noun.ent_type_:
            continue
        if any(child.dep_ in _ARTICLE_DEPS for child in noun.children):
            continue
        if name.ent_type_ == "PERSON" and name.ent_iob_ == "B" and verb.whitespace_:
            return True
    return False


_PRESENT_TAGS = frozenset({"VBZ", "VBP"})
_CLAUSE_JOINING_TAGS = frozenset({"CC", "WDT", "WP", "WP$", "WRB"})


def _present_headline_before_past_clause(span: Span) -> bool:
    """A past-tense verb right after a person's name (a role may stand
    before it) heads the sentence, or the parser joined it to a present-tense
    verb before the name as a conjunct though no conjunction stands between;
    and that present-tense verb has nothing joining its clause to the past
    one: no punctuation, no conjunction, no subordinator, no verb right
    before the name ("Dublin gears up for the Easter Parade Mayor Tom Byrne
    pledged ..."). A contact relative clause ("Ann thinks the plan Tom
    drafted was weak") makes the past verb a modifier, not the head, and
    "The mayor says Tom pledged ..." puts a verb before the name."""
    doc = span.doc
    if span[0].tag_ in CLAUSE_OPENING_TAGS:
        return False
    for past in span[2 : MAX_HEADING_TOKENS + 4]:
        last = doc[past.i - 1]
        if past.tag_ != "VBD" or last.ent_type_ != "PERSON" or past.dep_ not in ("ROOT", "conj"):
            continue
        start = last.i
        while start > span.start and doc[start].ent_iob_ == "I":
            start -= 1
        while start > span.start and doc[start - 1].tag_ == "NNP" and not doc[start - 1].ent_type_:
            start -= 1  # a role written as a title: "President", "Mayor"
        if start == span.start or doc[start - 1].tag_.startswith("VB"):
            return False
        present = _present_verb_before(span, start)
        return present is not None and (past.dep_ == "ROOT" or past.head.i == present.i)
    return False


def _present_verb_before(span: Span, start: int) -> Token | None:
    """The present-tense verb nearest before `start` in `span`, not the
    first word, with no punctuation, conjunction, subordinator or other
    finite verb between."""
    doc = span.doc
    for k in range(start - 1, span.start, -1):
        token = doc[k]
        if token.tag_ in _PRESENT_TAGS:
            return token
        if token.is_punct or token.tag_ in _CLAUSE_JOINING_TAGS or token.dep_ == "mark" or token.tag_ in FINITE_TAGS:
            return None
    return None


MAX_INSIDE_HEADING_TOKENS = 8  # the lowercase run of a subheading ("beaver-human relations")
_TITLE_TAKING_TAGS = frozenset({"DT", "PDT", "PRP$", "POS", "IN", "TO", "CC", "WDT", "WP$"})
_ADJECTIVE_TAGS = frozenset({"JJ", "JJR", "JJS"})
_COMMON_WORD_TAGS = frozenset({"NN", "NNS", "VBG"})


def heading_inside(span: Span) -> bool:
    """Whether a caption or a subheading is run into the middle of `span` (module docstring)."""
    doc = span.doc
    for token in span[1:]:
        before = doc[token.i - 1]
        if not token.is_title or not _capitalised(token) or token.tag_ in _ADJECTIVE_TAGS:
            continue  # "other Russian officials": a nationality
        if token.ent_type_ and token.tag_ not in _COMMON_WORD_TAGS:
            continue  # a name; a common word's tag outweighs an entity the model guessed ("Sharing" as a PERSON)
        if not (before.whitespace_ and before.is_lower and before.is_alpha and before.tag_ not in _TITLE_TAKING_TAGS):
            continue
        if not any(t.tag_ in FINITE_TAGS for t in doc[span.start : token.i]):
            continue  # the words before are no clause
        k = token.i + 1
        while k < span.end and k - token.i <= MAX_INSIDE_HEADING_TOKENS and (doc[k].is_lower or doc[k].tag_ == "HYPH"):
            if doc[k].tag_ in FINITE_TAGS:
                break
            k += 1
        if k == token.i + 1 or k >= span.end or doc[k].tag_ in FINITE_TAGS:
            continue
        closing = doc[k - 1]  # a heading ends on its noun, prose before a name on a preposition or a determiner
        if _capitalised(doc[k]) and closing.tag_ in ("NN", "NNS") and closing.is_lower and closing.whitespace_ and any(t.tag_ in FINITE_TAGS for t in doc[k : span.end]):
            return True
    return False
