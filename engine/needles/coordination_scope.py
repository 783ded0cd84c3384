"""Coordinations whose "and" <-> "or" swap is no needle because of what
scopes over them or what they count (the con rule's issue-27 session-4
classes), each a pure check of the parse; called by
engine.needles.coordination_sense after its own classes.

- question: a sentence that asks ("Did the mayor open the harbour and the
  market?", "..., or did she?") states no claim to flip, and a tag "or was
  it?" turns ungrammatical as "and was it?";
- negative operator: a negative noun above the coordination ("the failure
  to repair the bridges and roads" = "... bridges or roads"), a negative
  quantity on a word above it or on the subject of a verb above it
  ("little interest in A and B", "Few ships sailed to A and B";
  negation_polarity decides "little" and "few"; a number capped from
  above, "less than 9 percent of them had A or B", "at most three boats",
  "no more than"), also on the subject of coordinated verbs ("Fewer than
  ten boats sailed or stayed"),
  or a negative existential over the whole sentence ("There is nothing that
  shows A, and B"): under all of them, "and" and "or" say the same;
- embedded questions: clauses of which one is an indirect question ("it is
  unclear what the panel found and whether it will report"): "or" between
  two things not known says the same; and any coordination inside an
  indirect question that a word of asking or doubt governs ("calls into
  question how the board would treat A and B", "asked whether A and B
  would come", "it is unclear how A and B"): the sentence asserts neither
  reading, so the swap flips no claim;
- category union: "bread and other baked goods" / "bread or other baked
  goods" name one category with an example (two members; not "A and two
  other B", who are counted people), also over a repeated preposition
  ("in China and in other emerging economies");
- degrees: two degree adverbs on one word ("very or somewhat likely",
  "strongly or somewhat agree"): points of one scale, "and" joins none;
- comparative: adjectives under one comparative word ("more costly and
  risky"): the comparison covers both, and "or" says the same;
- count of a union: "the number of letters and parcels was N" (or "the
  total sale of A and B") counts the same items as "letters or parcels";
- rank: a rank behind a list ("third-largest behind A, B and C") needs
  every member ahead, whatever the length of the list;
- members of a plural: two adjectives modifying one plural head ("the Dutch
  and Belgian governments", two governments, one each; "current and former
  officials", one set either way) or an apposition to
  a plural ("the twins Anna and Maria"): the plural names every member, and
  "or" breaks it; also two participles or the agents of one restricting a
  plural ("documents signed or stamped by the clerk"), modifier runs into a
  plural however parsed ("the damaged or destroyed sheds", "the Crimean and
  the Boer wars"), two bare plurals under one restrictive clause ("shops and
  bars that opened late"), and kinds of a plural ("codes of civil and
  criminal procedure", "the spirits of greed and envy") (the complement of a plural subject, "the reasons are the
  weather and the strike", is engine.needles.coordination_lists's, at any
  length; after a dash or a colon, engine.needles.coordination_parts's, at
  any length, with free choice under a noun, "the ability to recruit
  nurses and teachers");
- one of a pool: plurals coordinated under a word that picks members out of
  them ("one of those days and places", "each of the boats and barges"):
  the pool holds both either way;
- compound runs: "A1 A2 and B1 B2", two runs of common nouns ("the law
  enforcement and intelligence agency"): one head sorted by two compound
  modifiers or two things, which the words cannot tell apart;
- classifiers of one thing: two adjectives on one singular noun, one of
  them relational by WordNet ("the economic and political crisis", "a
  spiritual and moral disintegration"): kinds of one thing, not two traits;
- enumeration: "firstly because A, and secondly because B" lists both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.needles.binomial_list import RELATIONAL_ADJECTIVES
from engine.needles.coordination_lists import DASHES
from engine.needles.edits import asks
from engine.needles.negation_polarity import negative_few, negative_little

if TYPE_CHECKING:
    from spacy.tokens import Token

# nouns that negate their complement ("failure to comply with A and B" = "with A or B")
_NEGATIVE_NOUNS = frozenset(
    "failure refusal inability lack absence reluctance unwillingness avoidance prohibition ban denial rejection".split()
)
# nouns of lack ("want of fuel and medicine" = "of fuel or medicine"): WordNet spreads them over two
# classes, lack.n.01 (state: want, dearth, shortage) and insufficiency.n.01 (amount: scarcity,
# paucity), whose other members are no noun of lack here ("tightness", "deficit" of the mind), so a short list
_LACK_NOUNS = frozenset("want deficiency insufficiency shortage scarcity dearth paucity shortfall deprivation".split())
_NEGATIVE_OR_LACK_NOUNS = _NEGATIVE_NOUNS | _LACK_NOUNS
_NEGATIVE_PRONOUNS = frozenset({"nothing", "nobody", "none", "noone", "no-one"})
# nouns that count or sum the members of what their "of" phrase names
_COUNT_NOUNS = frozenset(
    "number total sum count tally share proportion percentage percent majority amount quantity volume value population"
    " census headcount".split()
)
_TOTAL_WORDS = frozenset({"total", "combined", "aggregate", "overall"})
# prepositions that place a rank behind or after others
_RANK_PREPOSITIONS = frozenset({"behind", "after", "trailing", "below", "ahead", "above"})
_ORDINAL_WORDS = frozenset("second third fourth fifth sixth seventh eighth ninth tenth".split())
_PLURAL_TAGS = frozenset({"NNS", "NNPS"})
_ENUMERATION_WORDS = frozenset({"secondly", "thirdly", "fourthly", "lastly"})
# prepositions of place whose phrase after two bare nouns restricts both ("wars and raids in Chad")
_PLACE_PREPOSITIONS = frozenset({"in", "from", "across", "throughout", "within"})
# words that pick members out of the pool their "of" phrase names ("one of those A and B")
_SELECTORS = frozenset({"one", "each", "any", "either", "neither", "none"})
# adverbs of degree, a closed class: two of them name points of one scale ("very or somewhat")
_DEGREE_ADVERBS = frozenset(
    "very somewhat extremely fairly quite rather slightly highly moderately strongly mildly completely partly "
    "partially totally fully mostly largely entirely little much".split()
)
# the quantity words of a number capped from above ("less than 9 percent", "fewer than ten", "at most three")
_UPPER_BOUNDS = (("less", "than"), ("fewer", "than"), ("at", "most"), ("no", "more", "than"), ("not", "more", "than"))
# words of asking or doubt: an indirect question under them is asked, not answered
_ASKING_WORDS = frozenset(
    "ask wonder question doubt query inquire enquire unclear uncertain unknown undecided unsure debate".split()
)
# the clauses that complete a word: an indirect question is one of them
_COMPLEMENT_CLAUSE_DEPS = frozenset({"ccomp", "csubj", "csubjpass", "pcomp", "xcomp"})


def scope_refusal(token: Token) -> str:
    """Why the swap of the conjunction `token` says the same or flips no
    claim ("" when none of these classes holds)."""
    head = token.head
    first = head
    while first.dep_ == "conj" and first.head.i != first.i:
        first = first.head
    if asks(token.sent.text):
        return "question"
    if _negative_scope(first):
        return "negative operator"
    if _embedded_questions(first) or _inside_asked_question(first):
        return "embedded questions"
    if _stray_infinitive(first):
        return "stray infinitive"
    if len(first.conjuncts) == 1 and first.pos_ in ("NOUN", "PROPN", "ADP") and _other(token):
        return "category union"
    if _degrees(first):
        return "degrees"
    if _shared_comparative(first):
        return "comparative"
    if first.dep_ == "pobj" and first.head.lower_ == "of" and _counting(first.head.head):
        return "count of a union"
    if _rank(first):
        return "rank"
    if _adjective_members(first) or _plural_members(first) or _restricting_participles(first) or _participles_read_as_verbs(token) or _modifier_run(token) or _articled_modifier_run(token) or _shared_restriction(first):
        return "members of a plural"
    if _distributed_kinds(first):
        return "kinds of a plural"
    if _one_of_a_pool(first):
        return "one of a pool"
    if (
        _classified_bare_plurals(first)
        or _bare_pair_in_a_class(first)
        or _classified_bare_pair(first)
        or _kinds_sorting_a_plural(first)
    ):
        return "members of a plural"
    if _modifiers_of_one_head(first) or _bare_modifier_noun(token) or _classifiers_of_one_thing(first) or _compound_runs(token):
        return "modifiers of one head"
    if _bare_plurals_sharing_a_place(first) or _members_restating_a_subject(token):
        return "members of a plural"
    following = next((t for t in token.doc[token.i + 1 : token.sent.end] if not t.is_punct), None)
    if following is not None and following.lower_ in _ENUMERATION_WORDS:
        return "enumeration"
    return ""


def _negative_scope(first: Token) -> bool:
    """A negative noun above the coordination's first conjunct, a negative
    quantity on a word above it or on the subject of a verb above it, or a negative existential root ("There is nothing ...",
    "There was no ...", "there is very little ...")."""
    shared_subject = first.pos_ in ("VERB", "AUX") and not any(
        c.dep_ in ("nsubj", "nsubjpass") for m in first.conjuncts for c in m.children
    )  # "fewer than ten boats sailed or stayed": the verbs share the capped subject
    for t in [first, *first.ancestors] if shared_subject else first.ancestors:
        if t.i != first.i and (_negative_noun(t) or _negatively_quantified(t)):
            return True
        if t.pos_ in ("VERB", "AUX") and any(
            c.dep_ in ("nsubj", "nsubjpass") and (c.lower_ in _NEGATIVE_PRONOUNS or _negatively_quantified(c)) for c in t.children
        ):
            return True  # "No ships sailed to A and B", "Few ships ..."
    # the clause's own verb, not the sentence's root: "On or near A there is little demand ..., and if ..., then ..."
    root = next((t for t in first.ancestors if t.pos_ in ("VERB", "AUX")), first.sent.root)
    if root.lemma_.lower() != "be" or not any(c.dep_ == "expl" for c in root.children):
        return False
    return any(
        c.dep_ in ("attr", "nsubj")
        and (c.lower_ in _NEGATIVE_PRONOUNS or any(d.dep_ == "det" and d.lower_ == "no" for d in c.children) or _negatively_quantified(c))
        for c in root.children
    )  # "In and around the port there is little work": little of it in either place, as "no"


def _negative_noun(word: Token) -> bool:
    """`word` is a noun of refusal or lack ("the failure to", "want of"),
    not a verb spelled like one: the verb "want" desires its object ("wants
    to hire nurses and teachers" names both), and the negative verbs ("ban",
    "lack") are conjunctions' downward operators."""
    return word.pos_ not in ("VERB", "AUX") and word.lemma_.lower() in _NEGATIVE_OR_LACK_NOUNS


def _negatively_quantified(word: Token) -> bool:
    """`word` carries "little" or "few" as a negative quantity ("little
    interest", "few ships"), or is that quantity itself ("no" is
    conjunctions' downward determiner)."""
    sent = word.sent
    if any(_capped(t) for t in (word, *word.children) if t.tag_ == "CD"):
        return True  # "less than 9 percent of them", "at most three boats"
    return any(t.lower_ == "little" and negative_little(sent, t) or t.lower_ == "few" and negative_few(sent, t) for t in (word, *word.children))


def _capped(number: Token) -> bool:
    """A number capped from above by its quantity words ("less than 9", "at most three")."""
    doc = number.doc
    words = [t.lower_ for t in doc[max(number.sent.start, number.i - 3) : number.i]]  # "at" hangs on the verb
    return any(words[-len(b) :] == list(b) for b in _UPPER_BOUNDS)


def _inside_asked_question(first: Token) -> bool:
    """The coordination lies inside an indirect question ("how ...",
    "whether ...") that completes a word of asking or doubt ("asked
    whether", "it is unclear how", "calls into question how")."""
    for t in first.ancestors:
        if t.pos_ in ("VERB", "AUX") and t.dep_ in _COMPLEMENT_CLAUSE_DEPS and _asks_indirectly(t):
            if _infinitival_question(t):
                return True  # "concerned about how to unify A and B": an open question of what to do, under any word
            governor = t.head
            if governor.lemma_.lower() in _ASKING_WORDS or governor.lower_ in _ASKING_WORDS:
                return True
            # "calls into question how", "raises the question whether", "is a question how"
            return any(
                d.lower_ in ("question", "questions", "doubt", "doubts") for d in governor.subtree if d.i < t.i and d.pos_ == "NOUN"
            )
    return False


def _infinitival_question(verb: Token) -> bool:
    """`verb` is the bare infinitive of a wh- or "whether" question ("how to
    unify", "what to build", "whether to sail"): it asks what to do and
    asserts none of it, whatever word it completes."""
    doc = verb.doc
    opener = doc[verb.left_edge.i]
    to = opener.i + 1
    return verb.tag_ == "VB" and to < verb.i and doc[to].lower_ == "to" and doc[to].head.i == verb.i and (
        opener.lower_ == "whether" or opener.tag_ in ("WP", "WRB")
    )


def _embedded_questions(first: Token) -> bool:
    """A coordination of clauses, one of them an indirect question: opened by
    "whether" or by a wh-word ("what the panel found and whether it will
    report"), and not the main clause."""
    members = [first, *first.conjuncts]
    if not all(m.pos_ in ("VERB", "AUX") for m in members):
        return False
    if first.dep_ == "ROOT" and _questions_list_as_root(first, members):
        return True
    if first.dep_ not in _COMPLEMENT_CLAUSE_DEPS:
        return False  # a relative or adverbial clause ("which struggled ... and has remained") asks nothing
    return any(_asks_indirectly(m) for m in members)


def _questions_list_as_root(root: Token, members: list[Token]) -> bool:
    """The parser's root of a list of indirect questions ("depends on where
    she lives, what bus is used and how far the shop is": "used" made the
    root, the first question hung on it): every member opens with a wh-word,
    the first right after a comma, and an indirect question that completes a
    word stands before it."""
    doc = root.doc
    # the root's own clause starts after the last comma before it, with a wh-word of the root or of its
    # subject ("..., what method is used"); the parser hangs the clause before that comma anywhere
    commas = [t.i for t in doc[root.sent.start : root.i] if t.text == ","]
    if not commas:
        return False
    start = commas[-1] + 1
    opener = doc[start]
    if opener.tag_ not in ("WP", "WP$", "WRB", "WDT") or not (opener.head.i == root.i or opener.head.head.i == root.i):
        return False
    if not all(_asks_indirectly(m) for m in members[1:]):
        return False
    return any(
        t.pos_ in ("VERB", "AUX") and t.dep_ in _COMPLEMENT_CLAUSE_DEPS and t.i < start and _asks_indirectly(t)
        for t in doc[root.sent.start : start]
    )


def _asks_indirectly(verb: Token) -> bool:
    opener = verb.doc[verb.left_edge.i]
    if opener.lower_ == "whether" or any(c.dep_ == "mark" and c.lower_ == "whether" for c in verb.children):
        return True
    return opener.tag_ in ("WP", "WP$", "WRB", "WDT") and opener.head.i in (verb.i, *(c.i for c in verb.children))


def _other(token: Token) -> bool:
    """The conjunct after the conjunction is "other B" ("A and other B"), not
    counted ("Severin and two other MEPs" are three people, not a category)."""
    later = [c for c in token.head.children if c.dep_ == "conj" and c.i > token.i]
    if later and token.head.pos_ == "ADP":
        if token.head.lower_ != later[0].lower_:
            return False  # "in A and in other B" repeats its preposition; "in A and from other B" is two places
        later = [c for c in later[0].children if c.dep_ == "pobj"]
    if not later or any(c.dep_ == "nummod" for c in later[0].children):
        return False
    return any(c.lower_ == "other" and c.i < later[0].i for c in later[0].children)


def _degrees(first: Token) -> bool:
    """Two degree adverbs coordinated on one word ("very or somewhat likely",
    "strongly or somewhat agree"): exclusive points of one scale, a poll's
    answers counted together; "very and somewhat likely" is no degree."""
    members = [first, *first.conjuncts]
    if len(members) != 2:
        return False
    if first.dep_ == "advmod" and all(m.pos_ == "ADV" and m.lower_ in _DEGREE_ADVERBS for m in members):
        return True
    # one word with and without a degree adverb ("very satisfied or satisfied", "strongly agree or agree"):
    # the same points of one scale
    second = members[1]
    graded = [m for m in members if any(c.dep_ == "advmod" and c.lower_ in _DEGREE_ADVERBS for c in m.children)]
    return first.lower_ == second.lower_ and len(graded) == 1


# the words of a periphrastic comparative ("more A and B"); "most"/"least" make superlatives, no comparison
_COMPARATIVE_WORDS = frozenset({"more", "less"})


def _shared_comparative(first: Token) -> bool:
    """Adjectives or adverbs coordinated under one comparative word on the
    first ("much more cost-effective and productive", "less costly or
    risky"), with no degree word of the second's own: the comparison covers
    both, and under a comparative "and" and "or" say the same (the
    protocol's none/each operators; issue 27, reads 5941 and 20b on the
    same shape). A comparative on each ("more costly and more risky") is two
    claims, and "than" phrases are `_downward`'s in the con rule."""
    members = [first, *first.conjuncts]
    if len(members) != 2 or any(m.pos_ not in ("ADJ", "ADV") for m in members):
        return False
    second = members[1]
    if not any(c.dep_ == "advmod" and c.lower_ in _COMPARATIVE_WORDS and c.i < first.i for c in first.children):
        return False
    return not any(c.dep_ == "advmod" and c.i < second.i for c in second.children)


def _counting(noun: Token) -> bool:
    """A noun that counts or sums: "the number of", "the total issue of"."""
    return noun.lemma_.lower() in _COUNT_NOUNS or any(c.dep_ == "amod" and c.lower_ in _TOTAL_WORDS for c in noun.children)


def _rank(first: Token) -> bool:
    """The coordination is the object of "behind"/"after"/... under an
    ordinal or a superlative ("the fourth-largest behind A, B and C")."""
    if first.dep_ != "pobj" or first.head.lower_ not in _RANK_PREPOSITIONS:
        return False
    if first.head.lower_ == "ahead" and first.head.i + 1 < len(first.doc) and first.doc[first.head.i + 1].lower_ != "of":
        return False
    ranked = first.head.head
    if ranked.lower_ == "ahead":  # "ahead of": the rank is above "ahead"
        ranked = ranked.head
    words = ranked.doc[ranked.left_edge.i : ranked.i + 1]
    return any(t.tag_ in ("JJS", "RBS") or t.lower_ in _ORDINAL_WORDS or t.ent_type_ == "ORDINAL" for t in words)


def _adjective_members(first: Token) -> bool:
    """Two modifiers of one plural head, both capitalised (not
    sentence-initial: "the Dutch and Belgian governments" are one government
    each) or both plain adjectives ("current and former officials", "public
    and private schools": "or" names the same set; the parse does not tell
    them from adjectives that hold at once, "complex and costly repairs",
    where "or" only weakens the claim, so both are refused)."""
    if first.dep_ not in ("amod", "compound", "nmod"):
        return False
    members = [first, *first.conjuncts]
    if len(members) != 2 or first.head.i < max(m.i for m in members):
        return False
    if all(m.tag_ == "JJ" and m.dep_ in ("amod", "conj") for m in members) and _plural_phrase_end(first.head):
        return True  # "current and former officials", "current and former police, army and court officials"
    if first.head.tag_ not in _PLURAL_TAGS:
        return False
    return all(m.i > m.sent.start and m.text[:1].isupper() and m.pos_ in ("ADJ", "PROPN") for m in members)


def _participles_read_as_verbs(token: Token) -> bool:
    """Two participles on either side of the conjunction `token`, right
    after a preposition or a determiner and before a noun phrase that ends in
    a plural ("concern over damaged and destroyed historical sites"): no
    clause's verb can open after "over" or "the", so both modify the plural
    and sort one set, as "the damaged and destroyed sites" (session 13: "or"
    names the same set), however the parser hangs them (it reads the second
    as a verb taking the plural as its object, joined to the clause's verb
    or to the first). "The storms damaged and destroyed the sites" has a
    subject before them: not this."""
    doc, sent = token.doc, token.sent
    if not sent.start + 1 < token.i < sent.end - 2:
        return False
    before, first, second = doc[token.i - 2], doc[token.i - 1], doc[token.i + 1]
    if before.tag_ not in ("IN", "DT") or not all(w.tag_ in ("VBN", "JJ", "VBD") and w.lower_.endswith("ed") for w in (first, second)):
        return False
    after = doc[second.i + 1]
    return after.pos_ in ("ADJ", "NOUN") and _plural_phrase_end(after)


def _plural_phrase_end(noun: Token) -> bool:
    """`noun` is plural, or the noun phrase it starts runs on through nouns,
    commas and conjunctions to a plural ("law enforcement, intelligence and
    administration officials": the parser may hang the adjectives on the
    first noun of that run)."""
    if noun.tag_ in _PLURAL_TAGS:
        return True
    doc = noun.doc
    i = noun.i + 1
    last = noun
    while i < noun.sent.end and (doc[i].pos_ in ("NOUN", "PROPN", "ADJ", "CCONJ") or doc[i].text == ","):
        if doc[i].pos_ in ("NOUN", "PROPN"):
            last = doc[i]
        i += 1
    return last.tag_ in _PLURAL_TAGS and last.i > noun.i


def _plural_members(first: Token) -> bool:
    """The coordination spells out a plural in apposition to it ("the twins
    Anna and Maria"); two members only: a longer list reads as a list (the
    reading scheme's C)."""
    if len(first.conjuncts) != 1 or first.dep_ != "appos":
        return False
    # after a comma it may be the parser's list of three ("mothers, heroes and martyrs")
    between = first.doc[first.head.i + 1 : first.left_edge.i]
    return first.head.tag_ in _PLURAL_TAGS and first.head.i < first.i and not any(t.text == "," for t in between)


def _members_restating_a_subject(token: Token) -> bool:
    """The conjunction sits in a run set off by commas between a plural
    subject and its verb ("The old rivals of the club, pride and money,
    still divide the town"): the run names the plural's members, whatever
    the parse (it often makes the run a list of three with the subject's
    "of" object), and "or" leaves a plural restated by one member. A list
    of three subjects has no comma before the verb ("The rivals of the club,
    pride and money divide the town"), so the closing comma tells them
    apart."""
    doc, sent = token.doc, token.sent
    opening = next((i for i in range(token.i - 1, sent.start - 1, -1) if doc[i].text == ","), None)
    closing = next((i for i in range(token.i + 1, sent.end) if doc[i].text == ","), None)
    if opening is None or closing is None or closing + 1 >= sent.end:
        return False
    run = [t for t in doc[opening + 1 : closing] if t.i != token.i]
    if not run or any(t.pos_ in ("VERB", "AUX") or t.dep_ == "cc" or t.text in DASHES for t in run):
        return False  # a clause, or a second conjunction: not one restating run
    verb = doc[closing + 1]
    while verb.pos_ == "ADV" and verb.i + 1 < sent.end:
        verb = doc[verb.i + 1]  # "..., still threaten"
    if verb.pos_ not in ("VERB", "AUX"):
        return False
    subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass") and c.i < opening]
    return any(s.tag_ in _PLURAL_TAGS and not any(d.dep_ == "conj" and d.i < opening for d in s.children) for s in subjects)


def _restricting_participles(first: Token) -> bool:
    """Two participles restricting one plural noun ("the documents signed or
    stamped by the clerk"), or the two agents of one such participle
    ("statements made by the mayor and his aides"): the plural names the
    members that meet either, so "and" and "or" name the same set (or "or"
    reads member by member)."""
    if len(first.conjuncts) != 1:
        return False
    if first.dep_ == "pobj" and first.head.lower_ == "by":
        # the participle whose agents the coordination names, over the parser's "made during the talks by A and B"
        word = first.head
        while word.dep_ in ("agent", "prep", "pobj") and word.tag_ != "VBN" and word.head.i != word.i:
            word = word.head
        return word.dep_ == "acl" and word.tag_ == "VBN" and word.head.tag_ in _PLURAL_TAGS
    return first.dep_ == "acl" and first.tag_ == "VBN" and first.head.tag_ in _PLURAL_TAGS and first.conjuncts[0].tag_ == "VBN"


_MODIFIER_TAGS = frozenset({"JJ", "VBN", "VBG"})
# determiners of quantity that a mass noun takes ("some wine", "much abuse")
_MASS_DETERMINERS = frozenset({"some", "much", "more", "most", "such", "all", "enough", "less"})


def _modifier_run(token: Token) -> bool:
    """The conjunction joins two single modifiers run straight into a plural
    noun ("the damaged or destroyed sheds", "old and new members"), however
    the parser hangs them (it may make the first an object and the plural
    the second's): the modifiers sort one plural set, as
    `_adjective_members` says of a clean parse."""
    doc = token.doc
    sent = token.sent
    if token.i - 1 <= sent.start or token.i + 2 >= sent.end:
        return False
    before, after = doc[token.i - 1], doc[token.i + 1]
    if before.tag_ not in _MODIFIER_TAGS or after.tag_ not in _MODIFIER_TAGS:
        return False
    opener = doc[token.i - 2]
    if opener.text == "," or opener.tag_ in _MODIFIER_TAGS or opener.pos_ in ("NOUN", "PROPN"):
        return False  # a list of three ("old, damaged or destroyed"), or a participle after its noun
    i = token.i + 2
    while i < sent.end and doc[i].pos_ in ("NOUN", "PROPN") and doc[i].tag_ not in _PLURAL_TAGS:
        i += 1  # compound nouns before the head: "damaged or destroyed school buildings"
    return _plural_head_at(doc, i, sent.end)


def _plural_head_at(doc, i: int, end: int) -> bool:
    return i < end and doc[i].tag_ in _PLURAL_TAGS and (i + 1 >= end or doc[i + 1].pos_ not in ("NOUN", "PROPN"))


def _articled_modifier_run(token: Token) -> bool:
    """"the A and the B PLURAL", each member a run of modifiers under its
    own "the" ("the Spanish-American and the Russo-Japanese wars": one war
    each): the plural is sorted by the members, as in `_modifier_run`. Both
    "the"s are required, so a clause ("the ship was old and the crew
    members ...") is no such run."""
    doc = token.doc
    sent = token.sent

    def modifier(word: Token) -> bool:
        return word.tag_ in _MODIFIER_TAGS or word.tag_ in ("HYPH", "NN", "NNP")

    if doc[token.i - 1].tag_ not in (*_MODIFIER_TAGS, "NNP"):
        return False  # a common noun before the conjunction is a member, not a modifier: "the coast and the harbour towns"
    i = token.i - 1
    while i > sent.start and modifier(doc[i]):
        i -= 1
    if i == token.i - 1 or doc[i].lower_ != "the":
        return False
    j = token.i + 1
    if j >= sent.end or doc[j].lower_ != "the":
        return False
    j += 1
    start = j
    while j < sent.end and modifier(doc[j]):
        j += 1
    # a common plural ("wars"), not a name's ("the New York Giants and the Cleveland Indians": two teams)
    return j > start and _plural_head_at(doc, j, sent.end) and doc[j].tag_ == "NNS" and doc[j].is_lower


def _modifiers_of_one_head(first: Token) -> bool:
    """Two modifiers before one head noun that names a kind, not one thing:
    a singular with no determiner or with a determiner of quantity
    ("widespread verbal and physical abuse", "red and white wine", "some
    ancient and modern art"). A bare singular is a mass noun, so the
    modifiers sort one mass into kinds and "or" names the same (the
    protocol's equivalent swap); plurals are `_adjective_members`'. A
    singular of one thing ("a long and bitter quarrel", "the new and larger
    ferry") has two traits, and "or" says less: still swapped."""
    if first.dep_ not in ("amod", "compound", "nmod") or len(first.conjuncts) != 1:
        return False
    head = first.head
    if head.pos_ != "NOUN" or head.tag_ != "NN" or head.i < first.conjuncts[0].i:
        return False
    if first.left_edge.i > first.sent.start and first.doc[first.left_edge.i - 1].text == ",":
        return False  # the end of a longer list the parser hung on the last noun ("age, gender, income and ...")
    if any(m.pos_ not in ("ADJ", "NOUN") for m in (first, *first.conjuncts)):
        return False
    return not any(
        c.dep_ in ("poss", "nummod") or (c.dep_ in ("det", "predet") and c.lower_ not in _MASS_DETERMINERS)
        for c in head.children
    )


def _one_of_a_pool(first: Token) -> bool:
    """Plural nouns coordinated as the "of" phrase of a word that picks
    members out of them ("one of those times and places", "each of the
    boats and barges"): the pool is every member of both, and "or" names
    the same pool (the protocol's session-15 ruling)."""
    if first.dep_ != "pobj" or first.head.lower_ != "of" or first.tag_ not in _PLURAL_TAGS:
        return False
    return first.head.head.lower_ in _SELECTORS and all(m.tag_ in _PLURAL_TAGS for m in first.conjuncts)


def _classifiers_of_one_thing(first: Token) -> bool:
    """Two adjectives before one singular noun of one thing ("a spiritual
    and moral disintegration", "the economic and political crisis"), one
    of them relational by WordNet (engine.needles.binomial_list's
    RELATIONAL_ADJECTIVES: a pertainym, or a relational suffix on a noun
    stem): relational adjectives classify, sorting the one thing into kinds,
    and "or" names the same kind of thing (the protocol's session-15
    ruling). The same at any length, and on a plural from three adjectives
    on ("political, economic and ethnic rivalries": kinds of one set; a
    change that says nothing wins over a list of three, session 11).
    Adjectives of quality ("a long and bitter quarrel") assert two
    traits, and "or" only weakens the claim: still swapped. The parse cannot
    tell the relational sense of "critical" or "personal" from the quality
    one, so either word being relational is enough to abstain."""
    if first.dep_ != "amod" or not first.conjuncts:
        return False
    members = [first, *first.conjuncts]
    head = first.head
    if head.pos_ != "NOUN" or head.i < max(m.i for m in members) or any(m.dep_ != "conj" for m in first.conjuncts):
        return False
    if head.tag_ != "NN" and not (head.tag_ == "NNS" and len(members) > 2):
        return False  # two adjectives on a plural are `_adjective_members`'
    if any(m.tag_ != "JJ" for m in members):
        return False
    return any(m.lower_ in RELATIONAL_ADJECTIVES for m in members)


def _bare_modifier_noun(token: Token) -> bool:
    """"N1 and N2 HEAD" parsed as N1 conjoined with the phrase "N2 HEAD",
    where N1 is a bare noun that reads as well as a second modifier of HEAD
    ("transport and network security", "women and child refugees"): one
    head sorted by two modifiers, which "or" names alike (the protocol's
    equivalent swap), and the parse cannot tell it from two things. Only
    two kinds of N1 are taken, both bare (no determiner, modifier or
    before it; a phrase after HEAD may be shared: "women and child refugees
    in the camps"):
    - a singular common noun: a singular before a noun phrase with no
      article is the shape of a modifier (a count singular as a phrase of
      its own needs an article); a mass noun standing alone is the rarer
      reading in a sample of news;
    - "women" or "men", the plurals English puts before a plural head
      ("women doctors"). Any other plural (and a noun with a modifier of
      its own: "fuel duty and rail fares") is a phrase of its own: a
      modifier noun is singular."""
    doc = token.doc
    if token.i - 1 < token.sent.start or token.i + 2 >= token.sent.end:
        return False
    before, after = doc[token.i - 1], doc[token.i + 1]
    second = after.head
    if after.dep_ != "compound" or after.tag_ not in ("NN", "NNS") or second.dep_ != "conj" or second.head.i != before.i:
        return False
    if second.i <= after.i or any(doc[k].dep_ != "compound" for k in range(after.i, second.i)):
        return False
    if second.tag_ not in ("NN", "NNS") or len(before.conjuncts) != 1 or before.pos_ != "NOUN":
        return False  # a name, or a list ("age, gender, income and employment status") that reads as a list
    if any(c.i < token.i for c in before.children):
        return False  # N1 with a modifier or determiner of its own: a phrase that can stand alone
    if before.tag_ == "NN":
        return not before.lower_.endswith("ing")  # a gerund sharing the object: "painting and sailing boats"
    return before.lower_ in ("women", "men") and second.tag_ == "NNS"


def _compound_runs(token: Token) -> bool:
    """"A1 A2 and B1 B2": two runs of singular common nouns, each of two or
    more and each one compound by the parse, joined by the conjunction ("the law
    enforcement and intelligence agency", "a water supply and sewage
    treatment plant"). The words cannot tell "[A1 A2 and B1] B2", one head
    sorted by two modifiers (the protocol's equivalent swap), from "[A1 A2]
    and [B1 B2]", two things, and the parser hangs them either way: abstain.
    A single noun before the conjunction is `_bare_modifier_noun`'s."""
    doc = token.doc
    sent = token.sent

    def common(i: int) -> bool:
        return sent.start <= i < sent.end and doc[i].pos_ == "NOUN" and doc[i].tag_ in ("NN", "NNS")

    left = token.i - 1
    while common(left - 1):
        left -= 1
    right = token.i + 1
    while common(right + 1):
        right += 1
    if token.i - left < 2 or right - token.i < 2 or not common(token.i - 1) or not common(token.i + 1):
        return False
    if any(doc[i].tag_ != "NN" for i in range(left, right + 1) if i != token.i):
        return False  # a plural: "fuel duty and rail fares" names two things, and the parse cannot tell
    runs = (range(left, token.i - 1), range(token.i + 1, right))

    def in_compound(i: int, run: range) -> bool:
        if doc[i].dep_ in ("compound", "nmod") and i < doc[i].head.i <= run.stop:
            return True
        # the parse "[A1 A2 and B1] B2": B1 the conjunct of A2, which modifies B2
        before = doc[token.i - 1]
        return doc[i].dep_ == "conj" and doc[i].head.i == before.i and before.dep_ in ("compound", "nmod") and before.head.i == right

    if any(not in_compound(i, run) for run in runs for i in run):
        return False  # each run one compound by the parse: not "spent a year painting and sailing boats"
    return not (left > sent.start and doc[left - 1].text == ",")  # the end of a longer list


def _distributed_kinds(first: Token) -> bool:
    """Two adjectives on a singular noun in the "of" phrase of a plural ("the
    codes of civil and criminal procedure"): the plural holds one member of
    each kind, so "or" leaves the same codes, or no sense."""
    if first.dep_ != "amod" or first.tag_ != "JJ" or len(first.conjuncts) != 1:
        return False
    noun = first.head
    if noun.tag_ != "NN" or noun.i < first.conjuncts[0].i:
        return False
    return noun.dep_ == "pobj" and noun.head.lower_ == "of" and noun.head.head.tag_ in _PLURAL_TAGS


def _shared_restriction(first: Token) -> bool:
    """Two bare plural nouns under one restrictive relative clause or
    participle ("penalties on shops and bars that open late"): the clause
    restricts both, and the plural names the members of either kind, so
    "or" names the same set. The second noun bare (no determiner, number
    or possessive of its own), so the clause is shared, not the second's."""
    if first.tag_ not in _PLURAL_TAGS or len(first.conjuncts) != 1:
        return False
    second = first.conjuncts[0]
    if second.tag_ != "NNS" or second.i < first.i or any(c.dep_ in ("det", "nummod", "poss") for c in second.children):
        return False
    clauses = [c for c in [*second.children, *first.children] if c.dep_ in ("relcl", "acl") and c.i > second.i]
    return any(c.dep_ == "relcl" or c.tag_ in ("VBN", "VBG") for c in clauses)


def _bare(noun: Token) -> bool:
    """No determiner, possessive or number of its own."""
    return not any(c.dep_ in ("det", "predet", "poss", "nummod") for c in noun.children)


def _classified_bare_plurals(first: Token) -> bool:
    """Two bare plurals as the object of a preposition, a classifier or name
    before the first and no adjective of the second's own ("crimes that
    occur in public restrooms or locker rooms"; issue 27, session-15 ruling
    on "Belt and Road countries and regions"): bare plurals under a
    preposition name whatever falls in either class, so "and" and "or" name
    the same places. With a determiner ("the new roads and bridges") each
    plural is a set the sentence speaks of, and the swap stays."""
    if first.tag_ not in _PLURAL_TAGS or first.dep_ != "pobj" or len(first.conjuncts) != 1:
        return False
    second = first.conjuncts[0]
    if second.tag_ not in _PLURAL_TAGS or second.i < first.i or not (_bare(first) and _bare(second)):
        return False
    if not any(c.dep_ in ("amod", "compound", "nmod") and c.i < first.i for c in first.children):
        return False
    return not any(c.dep_ == "amod" for c in second.children)


def _classified_bare_pair(first: Token) -> bool:
    """Two bare nouns, plural or mass, as the object of a verb or a
    preposition, a classifying modifier before the first and no adjective,
    determiner or number on the second ("built with foreign-made steel and
    machinery", "runs state-level clinics and research centres"; issue 27,
    session-15 ruling): the modifier may restrict both, and then "or" names
    the same set; the words cannot tell, so abstain. A classifier is a
    modifier that names a kind, not a trait: a hyphenated compound, a
    capitalised word, a participle or a relational adjective
    (`_classifier`), or a common noun compounded with the first of two
    plurals when the second has none of its own ("men and women have different gender roles
    and obligations": a quality adjective before the classifier changes
    nothing). A common noun before each ("oil prices and interest rates":
    two things), and a quality adjective alone ("new roads and bridges")
    asserting a trait: both still swapped."""
    if first.pos_ != "NOUN" or first.tag_ not in ("NNS", "NN") or first.dep_ not in ("pobj", "dobj"):
        return False
    if len(first.conjuncts) != 1 or not _bare(first):
        return False
    second = first.conjuncts[0]
    if second.pos_ != "NOUN" or second.tag_ not in ("NNS", "NN") or second.i < first.i or not _bare(second):
        return False
    if any(c.i < second.i and c.dep_ not in ("compound", "cc", "punct") for c in second.children):
        return False  # an adjective of its own: "foreign steel and cheap machinery" names two things
    modifiers = [c for c in first.children if c.i < first.i and c.dep_ in ("amod", "compound", "nmod")]
    if any(_classifier(c) for c in modifiers):
        return True
    # a common noun before the first of two plurals classifies both when the second has no compound of its own
    # ("different crew duties and habits": crew duties and crew habits; not "oil prices and interest rates", nor
    # a mass noun after a plural, "war crimes and insurrection", where the noun reads as the first's alone)
    if first.tag_ != "NNS" or second.tag_ != "NNS" or any(c.i < second.i and c.dep_ == "compound" for c in second.children):
        return False
    return any(c.dep_ == "compound" and c.pos_ == "NOUN" for c in modifiers)


# prepositions whose object sorts a plural head into kinds: "charges of", "restrictions on", "laws against"
_SORTING_PREPOSITIONS = frozenset({"of", "on", "against", "for", "about", "over"})


def _kinds_sorting_a_plural(first: Token) -> bool:
    """Two common nouns with no determiner, possessive or number of their
    own as the "of" phrase of a plural ("sources of smoke and noise will be
    removed", session 19; "the evil spirits of extravagance and speculation",
    "other charges of war crimes and insurrection", session-20 ruling), or
    its phrase with another preposition that sorts it (`_SORTING_PREPOSITIONS`:
    "new restrictions on voting or registration", read 5921): the
    plural names whatever is one of its kind for either noun, so "or" names
    the same set. Not under a singular or mass head ("the exploitation of
    forestry and fisheries": the protocol's M, the swap stays), a counted
    head ("five years of study and travel" measures both), or members with a
    determiner of their own ("the rights of the buyer and the seller": two
    holders the sentence speaks of) or an adjective ("sources of black smoke
    and noise", session 19: it may be the first's alone)."""
    if first.pos_ != "NOUN" or first.dep_ != "pobj" or first.head.lower_ not in _SORTING_PREPOSITIONS or len(first.conjuncts) != 1:
        return False
    plural = first.head.head
    before = first.doc[first.head.i - 1] if first.head.i > first.sent.start else None
    if plural.pos_ in ("VERB", "AUX") and before is not None and before.tag_ == "NNS" and before.head.i == plural.i and before.dep_ in ("dobj", "nsubjpass"):
        plural = before  # the phrase hung on the verb: "imposed new limitations | on travel and immigration"
    if plural.pos_ != "NOUN" or plural.tag_ != "NNS" or plural.i > first.i or plural.like_num:
        return False
    if any(c.dep_ in ("nummod", "poss") for c in plural.children):
        return False  # counted, or one holder's ("its economies of labour and capital", session 17)
    second = first.conjuncts[0]
    if second.pos_ != "NOUN" or second.i < first.i:
        return False
    # a noun classifier ("war crimes") keeps the member a kind; an adjective ("black smoke") may be the first's alone
    return not any(c.i < m.i and c.dep_ not in ("cc", "punct", "compound") for m in (first, second) for c in m.children)


def _classifier(modifier: Token) -> bool:
    """A modifier that sorts its noun into a kind: a hyphenated compound
    ("state-level", "foreign-made"), a capitalised word not opening the
    sentence, a past participle, or an adjective WordNet relates to a noun
    ("national", "military")."""
    words = list(modifier.subtree)
    if any(w.tag_ == "HYPH" or "-" in w.text[1:-1] for w in words):
        return True
    if modifier.i > modifier.sent.start and modifier.text[:1].isupper():
        return True
    return modifier.tag_ == "VBN" or modifier.dep_ == "amod" and modifier.lower_ in RELATIONAL_ADJECTIVES


def _bare_pair_in_a_class(first: Token) -> bool:
    """Two bare nouns, the second with nothing of its own, restricted by one
    phrase of place after them whose object is a bare plural class ("fleeing
    violence and poverty in countries such as A and B"): the restriction is
    shared, as the session-14 ruling says of "penalties on banks and firms
    that trade with X", and "or" names the same. The restriction may hang on
    either noun."""
    if first.tag_ not in ("NN", "NNS") or len(first.conjuncts) != 1 or not _bare(first):
        return False
    second = first.conjuncts[0]
    if second.tag_ != first.tag_ or second.i < first.i or any(c.i < second.i for c in second.children):
        return False
    if first.tag_ == "NN" and any(c.i < first.i for c in first.children):
        return False  # a modified singular is the shape of one thing ("a long war and famine")
    for c in [*first.children, *second.children]:
        if c.dep_ == "prep" and c.i > second.i and c.lower_ in _PLACE_PREPOSITIONS:
            objects = [o for o in c.children if o.dep_ == "pobj"]
            if objects and objects[0].tag_ in _PLURAL_TAGS and _bare(objects[0]):
                return True
    return False


def _bare_plurals_sharing_a_place(first: Token) -> bool:
    """Two bare plurals (no determiner, possessive or number on either)
    followed at once by one phrase of place ("causing delays and angry
    complaints in Dover"): the phrase restricts both, wherever the parser
    hangs it (on either noun, or on the verb or preposition above them), so
    the pair names one set and "or" names the same (the session-14/15
    rulings on bare plurals sharing a restriction). The phrase must follow
    the second plural directly: a phrase of the second's own between them
    ("wars and talks with the rebels in Chad") makes it the second's."""
    if first.tag_ != "NNS" or len(first.conjuncts) != 1 or not _bare(first):
        return False
    second = first.conjuncts[0]
    if second.tag_ != "NNS" or second.i < first.i or not _bare(second):
        return False
    after = second.i + 1
    if after >= first.sent.end:
        return False
    place = first.doc[after]
    if _agent_of_both(place, first, second):
        return True
    if any(c.i > first.i and c.dep_ not in ("cc", "conj", "punct") for c in first.children):
        return False  # a phrase of the first's own ("mines in Africa and players in Asia"): each has its own
    if place.dep_ != "prep" or place.lower_ not in _PLACE_PREPOSITIONS or place.head.i not in (first.i, second.i, first.head.i):
        return False
    if place.head.i == first.head.i and place.lower_ == "from":
        return False  # the verb's own "from" ("protect A and B from harm"): an argument, no place
    # a time ("in May", "in 2019") dates the act, and restricts no kind
    return any(c.dep_ == "pobj" and c.ent_type_ not in ("DATE", "TIME") and c.pos_ != "NUM" for c in place.children)


def _agent_of_both(by: Token, first: Token, second: Token) -> bool:
    """A "by" phrase right after two bare plural nouns of acts names who
    does both ("takeoffs and landings by aircraft which ...", "arrests and
    searches by police"): one restriction on the two kinds of act, so the
    pair names one set and "or" names the same (issue 27, session 21, part 3).
    The parser hangs such a phrase on either noun or on a word anywhere
    above the pair; not when the pair is the subject (a passive's agent: "A and B were seized by
    police"), not an amount ("cut costs and jobs by 10 percent") or a time ("by May")."""
    if by.lower_ != "by" or by.dep_ not in ("prep", "agent") or first.dep_ in ("nsubj", "nsubjpass"):
        return False
    if first.dep_ == "pobj" and first.head.lower_ == "of":
        return False  # the doer of the act the "of" hangs on ("occupation of churches and rectories by the army")
    if by.head.i not in {first.i, second.i, *(a.i for a in first.ancestors)}:
        return False
    agents = [c for c in by.children if c.dep_ == "pobj"]
    return bool(agents) and agents[0].pos_ in ("NOUN", "PROPN") and not agents[0].ent_type_ and not any(
        c.dep_ == "nummod" for c in agents[0].children
    )


def _stray_infinitive(first: Token) -> bool:
    """A bare infinitive with no subject, auxiliary or "to" of its own made
    the conjunct of a finite "be" ("Officials are worried about how to
    repair A and best fund -- and ultimately expand -- B": "expand" hung on
    "are"): a finite "be" cannot share its subject with a bare infinitive,
    so the infinitive belongs to a coordination the parse lost, and what
    the swap would join is unknown. "is tired and will go home" (its own
    auxiliary) and "was tired and went home" (finite) stay."""
    if first.lemma_.lower() != "be" or first.tag_ not in ("VBP", "VBZ", "VBD"):
        return False
    return any(
        c.tag_ == "VB" and not any(d.dep_ in ("nsubj", "nsubjpass", "aux", "auxpass", "expl") for d in c.children)
        for c in first.conjuncts
    )
