"""Headings fused onto the sentence after them, found from the tagger's output.

Text shipped one line per article (news) keeps its subheadings, related-link
titles and brief-item titles, but not the line breaks that set them apart:
"Harbour works stall The council said ...". Before the parser runs
(engine.corpus.sentence_guards), these functions say where such a heading
ends, so that a sentence starts there; the heading is then a "sentence"
without a sentence end, and engine.corpus.sentence_gate drops it. Each
form needs the words since the last sentence end to read as a heading, and
abstains otherwise:

- `fused_heading(doc, i)`, at a capitalised word:
  - a word that opens sentences ("The", "In", "But"; spaCy's `is_stop`)
    followed by a lowercase word, after a few words without a comma, or up
    to 20 without a finite verb (the tagger's VBD/VBZ/VBP/MD);
  - a determiner opening a name ("The Port Authority approved ...") after at
    most 8 words without a finite verb or a comma that end in a noun, an
    adjective or a number (not "According to The Irish Times", "told The
    Times"), with a finite verb after it;
  - a name after a heading "<noun phrase> is <adjective>" ("Money is tight
    Dublin's plan ..."), with a finite verb after it;
  - (the same after a lowercase word, `_caption_before`: a caption with a
    verb of its own, before a conjunction, an adverb, or a quantifying stop
    word with a finite verb after it: "... than it is now Several years ago,
    the novel made waves");
  - a word that opens clauses (CC, RB, IN, WRB) capitalised right after a
    name or an acronym, before a lowercase word or a comma ("... Ties to
    the Ministry Despite not being able ...", "... for President Ann Walsh
    Yet much of ...", "Tom Byrne, harbour expert, HMC Similarly, in ..."):
    a heading or a caption ending in a name, with a finite verb after it; not
    before a title-case word (a title of a work: "Alice In Chains"), nor
    without a finite verb after it (the end of a name: "Facebook Live").
  - a capitalised modifier and a common noun after a headline's clause
    without an article or an auxiliary, ending in a preposition and a bare
    noun ("Skipper badly hurt in fall Harbour master of Kinsale, Ann Walsh,
    was ..."), with a finite verb after it and no "and", "who" or "when"
    before that (`_participle_headline_before`).
  - a speaker's name after a verbless heading ending in a preposition and
    a name ("New ferry route to Wales Ann Walsh also said ..."), before
    "said" or "says", when the document names the speaker elsewhere and
    never the two names together (`_speaker_after_named_heading`).
  - a capitalised word that is not a name after a lowercase noun with a
    hanging hyphen ("... stretch a budget- With every rise, ..."), with a
    finite verb after it (`_hanging_hyphen_before`).
- `restated_heading_starts(doc)`: a title restates the sentence it heads
  ("Ferry firm cuts winter sailings A harbour company will cut its winter
  sailings ..."). Where the words since the last sentence end (not opening
  "Word, ..."), ending in a lowercase noun, adjective or past participle or
  in a number, are followed by a capitalised word, and at least two of
  their content words, and at least half, come back in the rest of the
  sentence (which has a finite verb), a sentence starts at that word; of
  several such words, the one whose title comes back best. A name there
  must come from the title ("Ferry firm cuts sailings Ferry firm will ..."),
  else it is more likely an apposition ("the news agency KCNA said"),
  unless the title is a headline's clause (headlinese keeps possessives:
  "Yancoal buys Rio Tinto's coal assets China's Yancoal ...") or a list
  ending in a plural noun or an adjective ("Orbiter to study lightning,
  pollutants China has ..."). A title may end in a name only before a
  word that is not a name and opens sentences or follows a headline's
  clause ("Ferry firm cuts sailings to Cork Following the storm, ..."). A closing quotation mark after a sentence
  end ends the sentence too.
- `caps_heading_starts(doc)`: an all-capitals section heading at a sentence
  start, after a list numeral or none ("II. PUBLIC WORKS The board ...",
  "HARBOUR REVENUE I shall now turn ..."): two or more all-capitals words,
  one of five letters or more, then a capitalised word that is not all
  capitals (or "I" before a lowercase word). A sentence starts at that
  word, so the sentence under the heading is kept and the heading, without
  a sentence end, is dropped; an acronym and a name ("UUP MP Danny Byrne
  said") has no word of five capitals and is left whole.
- `name_heading_starts(doc)`: a name of two to four capitalised words set
  as a heading over the sentence that opens with the same name ("Ann Walsh
  Ann Walsh, the harbour master, said ..."): a sentence starts at the
  second copy. A single word is left ("Bora Bora"), as _one_word_heading's.
"""

from __future__ import annotations

import calendar
import os
import re
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING

from engine.needles.edits import FINITE_TAGS

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

MAX_HEADING_TOKENS = 20
SHORT_HEADING_TOKENS = 8
MAX_SENTENCE_TOKENS = 80  # how far a sentence after a heading is read
_SENTENCE_ENDS = frozenset(".!?:")  # where a heading may start (not ";": that is mid-sentence)
# what a heading may end in before a determiner that opens a name: a noun, an adjective, a number
_CONTENT_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS", "JJ", "JJR", "JJS", "CD"})
_TITLE_END_TAGS = _CONTENT_TAGS | {"VBN"}  # "Report of new type of passport dismissed"
_COPULAS = frozenset({"is", "are", "was", "were"})  # (the lemmatizer runs after the parser)
_PRONOUN_TAGS = frozenset({"PRP", "EX", "WP", "WDT"})
_PRONOUN_WORDS = frozenset({"it", "this", "that", "there", "what", "which"})
CLAUSE_OPENING_TAGS = frozenset({"IN", "RB", "RBR", "RBS", "WRB", "TO", "CC"})
_FUNCTION_TAGS = frozenset({"IN", "TO", "DT", "CC", "PRP$", "POS", "WDT"})
_OPENER_TAGS = frozenset({"CC", "RB", "IN", "WRB"})  # "But", "Yet", "However", "With", "When"
_QUANTIFIER_TAGS = frozenset({"JJ", "JJR", "JJS", "PDT"})  # "Many", "Several", "Most", "Few", "All"
_DETERMINER_TAGS = frozenset({"DT", "PRP$", "POS"})
_STEM = 5  # content words compared by their first letters: "recall" ~ "recalls", "approved" ~ "approval"
MIN_RESTATED = 2
_ATTRIBUTING = frozenset({"says", "said"})
_SINGLE_QUOTES = frozenset("'\u2018\u2019")
# what headlinese leaves out (not the possessive: "Yancoal buys Rio Tinto's coal assets")
_PROSE_TAGS = frozenset({"DT", "PDT", "PRP", "PRP$", "EX", "WDT", "WP", "WP$"})


def opens_sentences(token: Token) -> bool:
    # a capitalised function word, not a name the tagger sees ("16 May convinced": a month)
    return token.is_title and token.is_stop and token.text != "I" and token.tag_ not in ("NNP", "NNPS")


def new_line(token: Token) -> bool:
    return "\n" in token.text or "\n" in token.whitespace_


def _ends_sentence(token: Token) -> bool:
    # also a closing quotation mark after one ('... he did." Talks stall The envoy ...')
    return token.text in _SENTENCE_ENDS or new_line(token) or _closes_after_end(token)


def _closes_after_end(token: Token) -> bool:
    return token.is_quote and token.i > 0 and token.doc[token.i - 1].text in (".", "!", "?") and not token.doc[token.i - 1].whitespace_


def _may_end_sentence(token: Token) -> bool:
    # also an abbreviation's period ("... Securities Co. UBS said"): a finite verb after it may be another sentence's
    return _ends_sentence(token) or token.text[-1:] in ".!?"


def _words_before(doc: Doc, i: int) -> tuple[int, bool, bool] | None:
    """(words, finite, comma) of the words since the last sentence end before
    token i: how many, whether one is a finite verb (the tagger runs before
    the parser), whether one is a comma; None if more than MAX_HEADING_TOKENS."""
    k = i - 1
    finite = comma = False
    while k >= 0 and i - k <= MAX_HEADING_TOKENS + 1:
        token = doc[k]
        if _ends_sentence(token):
            break
        finite = finite or token.tag_ in FINITE_TAGS
        comma = comma or token.text == ","
        k -= 1
    else:
        if k >= 0:
            return None  # longer than any heading
    return i - k - 1, finite, comma


def _heading_before(doc: Doc, i: int) -> bool:
    found = _words_before(doc, i)
    if found is None:
        return False
    words, finite, comma = found
    return words > 0 and (not finite or (words <= SHORT_HEADING_TOKENS and not comma))


def _short_verbless_heading_before(doc: Doc, i: int) -> bool:
    found = _words_before(doc, i)
    return found is not None and 0 < found[0] <= SHORT_HEADING_TOKENS and not found[1] and not found[2]


def _caption_before(doc: Doc, i: int) -> bool:
    """A caption with a verb of its own fused before a sentence that opens
    with a conjunction or an adverb ("... extended to take barges With so
    many ...", "... the harbour master Yet the council ..."): such a word,
    capitalised inside a sentence after a lowercase word, opens one, unless
    a title-case word follows within 3 tokens ('"Pull Up to the Bumper"').
    So does a quantifying adjective that is a stop word ("Many", "Several",
    "Most", "Few") before a clause with a finite verb ("... than it is now
    Several years ago, the novel ... made waves"): prose does not capitalise
    it after a lowercase word either."""
    quantifier = doc[i].tag_ in _QUANTIFIER_TAGS and _finite_verb_from(doc, i)
    if (doc[i].tag_ not in _OPENER_TAGS and not quantifier) or not doc[i - 1].is_lower:
        return False
    if any(t.is_title and not t.is_stop for t in doc[i + 1 : i + 4]):
        return False
    found = _words_before(doc, i)
    return found is None or found[0] >= 3


def _heading_opening(doc: Doc, i: int) -> bool:
    """Whether the words before token i open as a title can: not with a
    preposition or an adverb ("In its white paper The Chinese Consumer in
    2030, ...", "Now the man The Washingtonian once called ...": a title of a
    work, a relative clause)."""
    found = _words_before(doc, i)
    return found is not None and doc[i - found[0]].tag_ not in CLAUSE_OPENING_TAGS


def _copula_heading_before(doc: Doc, i: int) -> bool:
    """3 to 5 words "<noun phrase> is <adjective>", not opening with a
    pronoun or "there" ("It is likely Murphy will ..." is a sentence)."""
    found = _words_before(doc, i)
    if found is None or not 3 <= found[0] <= 5 or found[2]:
        return False
    words = doc[i - found[0] : i]
    copula, adjective = words[-2], words[-1]
    if copula.lower_ not in _COPULAS or adjective.tag_ != "JJ":
        return False
    if words[0].tag_ in _PRONOUN_TAGS or words[0].lower_ in _PRONOUN_WORDS:
        return False
    return all(not t.tag_.startswith(("VB", "MD")) and not t.is_punct for t in words[:-2])


def _finite_verb_from(doc: Doc, i: int) -> bool:
    """Whether a finite verb follows token i before the next sentence end."""
    for token in doc[i : i + MAX_SENTENCE_TOKENS]:
        if token.tag_ in FINITE_TAGS:
            return True
        if _may_end_sentence(token):
            return False
    return False


def _after_word(doc: Doc, i: int) -> bool:
    """Token i follows a word (or a closing quotation mark) and a space."""
    before = doc[i - 1]
    if not before.whitespace_:
        return False
    closing = (before.is_quote or before.is_right_punct) and doc[i - 2].text[-1:] not in ".!?"
    return before.is_alpha or before.like_num or closing


def name_word(token: Token) -> bool:
    """A capitalised word of a name, or an acronym of two letters or more, as the tagger sees it."""
    return token.tag_ in ("NNP", "NNPS") and token.is_alpha and (token.is_title or (token.is_upper and len(token.text) > 1))


def _opener_after_name(doc: Doc, i: int) -> bool:
    """A word that opens clauses (a conjunction, an adverb, a preposition or
    subordinator, a wh-adverb), capitalised right after a name and followed
    by a lowercase word or a comma ("... for President Ann Walsh Yet much of
    ...", "... Ties to the Ministry Despite not being ...", "..., harbour
    expert, HMC Similarly, in ..."): prose writes such a word capitalised
    only where a sentence starts, so the name ends a heading or a caption
    run into the sentence. Not when a title-case word follows within two
    words (a title of a work: "Alice In Chains", "Gone With the Wind"), nor
    when no finite verb follows before the next sentence end: the word is
    then the last of a name ("over Facebook Live along the way", "the
    Internet Plus initiatives")."""
    token, before, after = doc[i], doc[i - 1], doc[i + 1]
    if not (token.is_title and token.is_alpha and len(token.text) > 1) or token.tag_ not in _OPENER_TAGS:
        return False
    if not name_word(before):
        return False
    if after.text == ",":
        if token.tag_ not in ("RB", "IN", "CC"):
            return False
    elif not (token.whitespace_ and after.is_lower and after.is_alpha):
        return False
    if any(t.is_title and not t.is_stop for t in doc[i + 1 : i + 3]):
        return False
    found = _words_before(doc, i)
    return (found is None or found[0] >= 2) and _finite_verb_from(doc, i)


def _hanging_hyphen_before(doc: Doc, i: int) -> bool:
    """A lowercase common noun with a hyphen written against it and a space
    after, then a capitalised word that is not a name, and a finite verb
    after it ("Trying to stretch a budget- With every rise, workers are
    ..."): a hyphen joins two words and a dash stands between spaces, so a
    hyphen left hanging before a capital is a heading's trailing dash, and the
    sentence starts at the capital. Not after a function word ("... the
    Constitution provides that- Every bill shall ...": a quotation introduced
    with a dash), nor before a name ("the north- South divide")."""
    before = doc[i - 1]
    word = before.text[:-1]
    if not (before.text.endswith("-") and len(word) > 1 and word.isalpha() and word.islower() and before.whitespace_):
        return False
    if before.tag_ not in ("NN", "NNS") or before.is_stop or doc[i].tag_ in ("NNP", "NNPS") or not doc[i].is_alpha:
        return False
    return _finite_verb_from(doc, i)


_AUXILIARY_WORDS = frozenset({"is", "are", "was", "were", "be", "been", "being", "has", "have", "had"})
_NOUN_TAGS = frozenset({"NN", "NNS"})
_CALENDAR_WORDS = frozenset(calendar.day_name) | frozenset(calendar.month_name[1:])
# what joins a second clause to the first in prose: "and", "but", "who", "which", "when"
_CLAUSE_LINKS = frozenset({"CC", "WDT", "WP", "WRB"})


def _participle_headline_before(doc: Doc, i: int) -> bool:
    """A headline's clause, a bare noun and a past verb without an auxiliary
    ending in a preposition and a bare noun ("Skipper badly hurt in fall",
    "Ferry pilot injured in crash"), fused onto a sentence whose subject
    opens with a capitalised modifier and a common noun ("Harbour master
    ..., Ann Walsh, 58, was hurt ..."). Headlinese drops articles and
    auxiliaries, prose keeps them: the words before token i hold no
    determiner, pronoun or comma, and the sentence after it reaches its
    own finite verb with nothing between that links a second clause ("...
    gathered in downtown Brooklyn streets and marched" is one sentence). Not
    before a day or a month ("... injured in crash Monday ...")."""
    found = _words_before(doc, i)
    if found is None or not 4 <= found[0] <= SHORT_HEADING_TOKENS or found[2]:
        return False
    words = doc[i - found[0] : i]
    if words[0].tag_ not in _CONTENT_TAGS or any(t.tag_ in _PROSE_TAGS or t.tag_ == "POS" for t in words):
        return False
    verbs = [k for k, t in enumerate(words) if t.tag_ in ("VBD", "VBN")]
    if len(verbs) != 1 or verbs[0] == 0 or any(t.lower_ in _AUXILIARY_WORDS for t in words):
        return False
    if words[-2].tag_ != "IN" or not words[-1].is_lower or words[-1].tag_ not in _NOUN_TAGS | {"JJ"}:
        return False
    token, after = doc[i], doc[i + 1]
    if token.text in _CALENDAR_WORDS or token.tag_ not in ("JJ", "NNP", "NN") or not (after.is_lower and after.tag_ in _NOUN_TAGS):
        return False
    for later in doc[i + 2 : i + MAX_SENTENCE_TOKENS]:
        if later.tag_ in FINITE_TAGS:
            return True
        if _may_end_sentence(later) or later.tag_ in _CLAUSE_LINKS:
            return False
    return False


def _speaker_after_named_heading(doc: Doc, i: int) -> bool:
    """A verbless heading without article or comma that ends in a
    preposition and a name ("New ferry route to Wales"), fused onto a
    sentence that opens with its speaker ("Ann Walsh also said ..."): the
    two names run together, and the document says where the second starts:
    it names the speaker (two words or more) elsewhere, never with the
    heading's last word in front. Only before
    "said" or "says" (an adverb may stand between): a heading's name is not
    a speaker, a speaker's name is ("Talks with Prime Minister Theresa May
    went well" is one sentence)."""
    if not (name_word(doc[i]) and name_word(doc[i - 1])):
        return False
    found = _words_before(doc, i)
    if found is None or not 3 <= found[0] <= SHORT_HEADING_TOKENS or found[1] or found[2]:
        return False
    words = doc[i - found[0] : i]
    if words[0].tag_ not in _CONTENT_TAGS or any(t.tag_ in _PROSE_TAGS or t.tag_.startswith("VB") for t in words):
        return False
    start = i - 1
    while start > i - found[0] and name_word(doc[start - 1]):
        start -= 1
    if doc[start - 1].tag_ != "IN":
        return False  # the heading's name follows its preposition: "... to Wales"
    end = i
    while end < len(doc) and name_word(doc[end]):
        end += 1
    if end - i < 2:
        return False  # a surname alone may be the end of the heading's name ("... for Cork Harbour Ann | Walsh")
    verb = end + (end < len(doc) and doc[end].tag_ == "RB")
    if verb >= len(doc) or doc[verb].lower_ not in _ATTRIBUTING:
        return False
    # the longest name from i the document repeats: one word more in front of it is never repeated
    return doc.text.count(doc[i - 1 : end].text) == 1 and doc.text.count(doc[i:end].text) >= 2


def fused_heading(doc: Doc, i: int) -> bool:
    """Whether token i starts a sentence fused onto a heading before it (module docstring)."""
    if i < 2 or i + 1 >= len(doc):
        return False
    token = doc[i]
    if token.is_title and _hanging_hyphen_before(doc, i):
        return True
    if not token.is_title or not _after_word(doc, i):
        return False  # every form below starts at a title-case word (checked first: most tokens are not)
    before, after = doc[i - 1], doc[i + 1]
    if _opener_after_name(doc, i):
        return True
    if not opens_sentences(token) and (_participle_headline_before(doc, i) or _speaker_after_named_heading(doc, i)):
        return True
    if opens_sentences(token):
        # a whole word ("Cant" is tokenized "Ca" + "nt", as "can't"), or "It's", "That's"
        if not token.whitespace_ and after.lower_ not in ("'s", "\u2019s"):
            return False
        if before.tag_ in _FUNCTION_TAGS and not before.is_upper:
            return False  # a heading does not end in a preposition: "Jaki Liebezeit from | Can augmented ..."
        if after.is_lower or (after.is_upper and after.is_alpha and len(after.text) > 1):  # "... For IVG to be"
            if before.is_title and any(t.is_title and not t.is_stop for t in doc[i + 1 : i + 3]):
                return False  # a title of a work: "watched Gone With the Wind"
            return _heading_before(doc, i) or _caption_before(doc, i)
        return (
            token.tag_ == "DT"
            and after.is_title
            and before.tag_ in _CONTENT_TAGS
            and _short_verbless_heading_before(doc, i)
            and _heading_opening(doc, i)
            and _finite_verb_from(doc, i)
        )
    return (
        token.is_title
        and token.tag_ in ("NNP", "NNPS")
        and before.tag_ == "JJ"
        and before.is_lower
        and _copula_heading_before(doc, i)
        and _finite_verb_from(doc, i)
    )


def content_stem(token: Token) -> str | None:
    """The compared form of a content word, or None for a function word or punctuation."""
    if token.is_stop or not token.is_alpha or token.tag_ == "CD" or len(token.text) < 2:
        return None  # numbers and "million" say little about what a sentence is about
    return token.lower_[:_STEM]


def _capitalised(token: Token) -> bool:
    return token.text[:1].isupper() and token.text != "I" and (token.is_alpha or token.is_title)


def _restated_start(doc: Doc, start: int) -> int | None:
    """The token where a title restated by its sentence ends, in the stretch
    that starts at token `start` (after a sentence end), or None."""
    if doc[start].tag_ == "IN":
        return None  # "At the State election in 1836, 94 Democrats and 34 | Whigs were elected": a clause
    end = start
    while end < len(doc) and end - start < MAX_SENTENCE_TOKENS and not _ends_sentence(doc[end]):
        end += 1
    if end - start > 1 and doc[start + 1].text == ",":
        return None  # "Currently, ...": a sentence adverb, not a title
    if end - start > 2 and _one_word_heading(doc, start):
        return start + 1
    stems = [content_stem(doc[k]) for k in range(start, end)]
    rest = Counter(s for s in stems if s)
    if sum(1 for n in rest.values() if n > 1) < MIN_RESTATED:
        return None  # a restated title has MIN_RESTATED words that come back: fewer words recur in the whole stretch
    heading: set[str] = set()
    best: tuple[float, int] | None = None
    finite, headlinese = False, True
    for i in range(start + 1, min(end, start + MAX_HEADING_TOKENS + 1)):
        if stems[i - start - 1]:
            heading.add(stems[i - start - 1])
            rest[stems[i - start - 1]] -= 1
        finite = finite or _agreeing_finite(doc, i - 1) or _headline_passive(doc, start, i - 1)
        # headlines quote with single marks ("Ross calls for 'constructive' talks")
        headlinese = headlinese and doc[i - 1].tag_ not in _PROSE_TAGS and not (doc[i - 1].is_quote and doc[i - 1].text not in _SINGLE_QUOTES)
        if not _title_ends_before(doc, i, heading, finite and headlinese):
            continue
        restated = sum(1 for s in heading if rest[s] > 0)
        if restated >= MIN_RESTATED and 2 * restated >= len(heading):
            score = restated / len(heading)
            if best is None or score >= best[0]:
                best = (score, i)
    if best is None or not _finite_verb_from(doc, best[1]):
        return None
    return best[1]


def _agreeing_finite(doc: Doc, k: int) -> bool:
    """Token k is a finite verb, and a present plural one follows a plural noun
    ("Ferry firms cut ...", not the noun of "Cork harbour press officer")."""
    tag = doc[k].tag_
    return tag in FINITE_TAGS and (tag != "VBP" or (k > 0 and doc[k - 1].tag_ in ("NNS", "NNPS")))


def _one_word_heading(doc: Doc, start: int) -> bool:
    """A one-word heading before a sentence that opens with its word ("Norway
    Norwegian fishermen say ..."): two capitalised words sharing their first
    4 letters, the first a name, then a finite verb."""
    first, second = doc[start], doc[start + 1]
    return (
        first.tag_ in ("NNP", "NNPS")
        and _capitalised(second)
        and bool(first.whitespace_)
        and len(os.path.commonprefix([first.lower_, second.lower_])) >= _STEM - 1
        and _finite_verb_from(doc, start + 1)
    )


def _title_ends_before(doc: Doc, i: int, heading: set[str], clause: bool) -> bool:
    """Whether a title may end before token i: a capitalised word after a
    lowercase word (a noun, an adjective, a past participle) or a number, or
    after a headline's attribution (", Li says"), not inside a name ("the
    Civil Aviation Safety | Authority"); a name must come from the title
    ("BMW to recall ... vehicles | BMW will recall"), else it is more likely
    an apposition ("the news agency | KCNA reported", "White House press
    secretary | Sean Spicer repeated ..." though three of its words come
    back), unless the title is a headline's clause (`clause`: a finite verb,
    which an apposition lacks, and none of the articles, pronouns, possessives
    or quotation marks headlines leave out: "Ross calls for new talks |
    Minister Ann Ross said ... talks", but not "It has been 45 years since
    US president | Richard Nixon declared ...")."""
    token, before = doc[i], doc[i - 1]
    if not (_capitalised(token) and _after_word(doc, i)):
        return False
    if _attribution_before(doc, i):
        return True
    if before.tag_ not in _TITLE_END_TAGS and not _reduced_passive(doc, i - 1):
        return False
    name = token.tag_ in ("NNP", "NNPS") or (token.is_upper and len(token.text) > 1)
    if before.tag_ in ("NNP", "NNPS") and before.is_title:
        # a title ending in a name, before a word that opens sentences or after a headline's clause,
        # not a name, which may go on ("Penn State beat Ohio | State ..."): "Ferry firm cuts sailings
        # to Cork | Following the storm ...", "... in the World Forum | The world is ..."
        return not name and (opens_sentences(token) or clause)
    if not (before.is_lower or before.like_num):
        return False
    if before.like_num and token.tag_ in ("NNS", "NNPS"):
        return False  # a count: "34 | Whigs"
    if before.tag_.startswith("JJ") and doc[i - 2].tag_ in _DETERMINER_TAGS:
        return False  # "a former | State official": the adjective modifies what follows
    return not name or content_stem(token) in heading or (clause and before.is_lower) or _listed_before(doc, i)


def _headline_passive(doc: Doc, start: int, k: int) -> bool:
    """Token k is a past participle right after the title's first word, a
    name or a noun, with no auxiliary: a headline's clause ("Mayor accused
    of 'wrecking' harbour deal"), whose verb the tagger does not call finite.
    Prose sets such a participle off with commas ("The mayor, accused of
    ...")."""
    return k == start + 1 and doc[k].tag_ in ("VBN", "VBD") and doc[start].tag_ in ("NNP", "NN", "NNS") and doc[k].lower_ not in _ATTRIBUTING


def _reduced_passive(doc: Doc, k: int) -> bool:
    """Token k is a past form right after a lowercase common noun, the
    headline's passive without its auxiliary, which the tagger reads as a
    past tense ("Crackdown sees 111 golf courses closed", "$120m steel mill
    reconstruction planned"): not after a name or a pronoun, a subject of
    prose ("Mr Xi met | Mr Tillerson"), nor a verb of saying ("Labour's John
    Mann said | Mr Osborne was ...")."""
    return (
        k > 0
        and doc[k].tag_ == "VBD"
        and doc[k].lower_ not in _ATTRIBUTING
        and doc[k - 1].tag_ in ("NN", "NNS")
        and doc[k - 1].is_lower
    )


def _listed_before(doc: Doc, i: int) -> bool:
    """The title is a list, with a comma, and ends in a plural noun or in an
    adjective after a comma or a conjunction ("Orbiter to study lightning,
    pollutants | China has ...", "Policy seen as prudent, neutral | China's
    policy ..."): not a role or a kind before a name, which is singular ("the
    news agency | KCNA") and after no determiner ("the rival firms | Apple
    and Google"), nor a headline's verb the tagger took for a plural noun
    ("President thanks | China for ...": no comma before)."""
    before = doc[i - 1]
    found = _words_before(doc, i)
    if found is None or not found[2] or doc[i - 2].tag_ in _DETERMINER_TAGS:
        return False
    return before.tag_ == "NNS" or (before.tag_ == "JJ" and (doc[i - 2].text == "," or doc[i - 2].tag_ == "CC"))


def _attribution_before(doc: Doc, i: int) -> bool:
    """A headline's attribution ends before token i: ", <Name> says" / "said"."""
    return i >= 3 and doc[i - 1].lower_ in _ATTRIBUTING and doc[i - 2].tag_ in ("NNP", "NNPS") and doc[i - 3].text == ","


def _stretch_starts(doc: Doc) -> tuple[list[int], list[int]]:
    """The tokens that start a stretch after a sentence end (or the doc's
    start), not a space: (not counting a colon as an end, counting it).
    One pass serves the three finders (`heading_starts`)."""
    plain: list[int] = []
    colon: list[int] = []
    at_start = at_colon_start = True
    for token in doc:
        space = token.is_space
        if not space:
            if at_start:
                plain.append(token.i)
            if at_colon_start:
                colon.append(token.i)
        ends = _ends_sentence(token)
        at_start = (ends and token.text != ":") or (at_start and space)
        at_colon_start = ends or (at_colon_start and space)
    return plain, colon


def _found_at_sentence_starts(
    doc: Doc, find: Callable[[Doc, int], int | None], after_colon: bool, starts: tuple[list[int], list[int]] | None = None
) -> list[int]:
    """What `find(doc, start)` returns, not None, at each token that starts a
    stretch after a sentence end (`_stretch_starts`, computed unless given)."""
    plain, colon = starts or _stretch_starts(doc)
    found = (find(doc, i) for i in (colon if after_colon else plain))
    return [i for i in found if i is not None]


def heading_starts(doc: Doc) -> tuple[list[int], list[int], list[int]]:
    """(restated_heading_starts, caps_heading_starts, name_heading_starts) of
    `doc`, from one pass over its sentence ends (engine.corpus.sentence_guards)."""
    starts = _stretch_starts(doc)
    return (
        _found_at_sentence_starts(doc, _restated_start, after_colon=False, starts=starts),
        _found_at_sentence_starts(doc, _caps_heading_end, after_colon=True, starts=starts),
        _found_at_sentence_starts(doc, _name_heading_end, after_colon=False, starts=starts),
    )


def restated_heading_starts(doc: Doc) -> list[int]:
    """The tokens where a sentence starts after a title that it restates (module docstring)."""
    # after a sentence end, not a colon ("... around the world: Women's day strikes, or what is called A Day ...")
    return _found_at_sentence_starts(doc, _restated_start, after_colon=False)


_CAPS_JOINERS = frozenset({"-", "&", "'", "\u2019", "'S", "\u2019S"})
_LIST_NUMERAL = re.compile(r"^(?:[IVXLC]+|\d{1,2})$")
MIN_CAPS_WORD = 5


def _caps_heading_end(doc: Doc, start: int) -> int | None:
    """The token after an all-capitals heading that opens at token `start`, or None."""
    k = start
    if k + 1 < len(doc) and _LIST_NUMERAL.match(doc[k].text.removesuffix(".")):
        if doc[k].text.endswith("."):
            k += 1  # "II." (not "CIVIL": a word of Roman letters)
        elif doc[k + 1].text == ".":
            k += 2  # "2" "."
    words = longest = 0
    while k < len(doc) and k - start <= MAX_HEADING_TOKENS and not new_line(doc[k]):
        token = doc[k]
        if token.text == "I" and k + 1 < len(doc) and doc[k + 1].is_lower:
            break  # "HARBOUR REVENUE I shall ..."
        if token.is_alpha and token.is_upper:
            words += 1
            longest = max(longest, len(token.text))
        elif token.text not in _CAPS_JOINERS:
            break
        k += 1
    if k >= len(doc) or words < 2 or longest < MIN_CAPS_WORD or not doc[k - 1].whitespace_:
        return None
    token = doc[k]
    if token.text == "By":
        return None  # a byline follows ("FILMMAKER'S VIEW By Ann Walsh Like ..."): the whole row is dropped
    return k if token.text == "I" or (token.is_title and token.is_alpha) else None


def caps_heading_starts(doc: Doc) -> list[int]:
    """The tokens where a sentence starts after an all-capitals heading (module docstring)."""
    return _found_at_sentence_starts(doc, _caps_heading_end, after_colon=True)


MAX_NAME_WORDS = 4


def _name_heading_end(doc: Doc, start: int) -> int | None:
    """Where the second copy of a name heading that opens at token `start` starts, or None."""
    for n in range(2, MAX_NAME_WORDS + 1):
        if start + 2 * n >= len(doc):
            return None
        words = doc[start : start + n]
        if not all(t.is_title and t.is_alpha and t.whitespace_ for t in words):
            return None
        if [t.text for t in doc[start + n : start + 2 * n]] == [t.text for t in words]:
            return start + n
    return None


def name_heading_starts(doc: Doc) -> list[int]:
    """The tokens where a sentence starts after a name heading it repeats (module docstring)."""
    return _found_at_sentence_starts(doc, _name_heading_end, after_colon=False)
