"""Coordinations whose "and" <-> "or" swap breaks a fixed phrase or a joint
reading (the con rule's issue-27 session-7 classes), each a pure check of
the parse; called by engine.needles.coordination_sense.

- reduplication: the same word on both sides ("years and years", "more and
  more", "round and round"): one phrase of degree or repetition, and "or"
  breaks it;
- particle pair: two bare particles of place or direction ("in and out",
  "back and forth", "up and down", "to and fro"): one movement, not two;
  or two bare adverbs of place ("at home and abroad", "from home and
  abroad"): everywhere, and "or" names the same places;
- binomial: a pair WordNet lists as one lemma ("bread and butter", "goods
  and services" inside "use of goods and services", "trial and error"):
  one meaning, and "or" breaks it. The list is fixed
  (engine.needles.binomial_list, derived once by scripts/derive_binomials.py),
  so a document's needle does not depend on the other documents prepared
  with it;
- fixed term: the first member completes a term WordNet lists as one
  lemma "X of Y" ("economy of scale", "balance of power", "freedom of
  speech"), and the coordination continues its object with a bare noun
  ("economies of scale and scope"): one extended term of a field, and
  "or" names no term (the same fixed list, its OF_TERMS);
- class pair: two bare plurals WordNet marks as antonyms ("men and women",
  "winners and losers", "strengths and weaknesses"): the pair names the whole
  class, and "or" names either half;
- pronoun pair: a masculine and a feminine personal pronoun ("his or her
  office", "he or she", "himself and herself"): one generic person, and
  the swap names another person or none;
- one-thing compound: two bare nouns coordinated as the modifier of one
  singular noun ("a research and development centre", "the oil and gas
  industry"): the compound names one thing covering both, and "or" names
  a thing of either kind (a plural noun is engine.needles.conjunctions'
  "modifier of a plural");
- symmetric predicate: the coordination lies inside a subject whose
  predicate compares its members ("the exports of A and B are similar",
  "the rules in A and B differ"): each is said to be like or unlike the
  other, and "or" leaves one member nothing to be compared with;
- listed subject: "A, B and C are" parsed with B as A's apposition and C
  as B's conjunct: the list is the subject, and "A, B or C are" breaks
  the agreement (the con rule refuses subjects);
- protection: a coordination guarded against at once ("protection from
  floods and fires", "powerless against A and B", "immune to A and B"):
  "or" names the same dangers;
- joint party: the coordination names the parties of one joint act or
  relation, as the "with" phrase of a verb of meeting, negotiating or
  joining ("met with A and B", "allied with A and B"), the "with"
  or "of" phrase of a noun of such an act or relation ("talks with A and
  B", "the merger of A and B", "a deal with A and B", also over the verb
  that takes the noun: "held talks with A and B"), or the party phrase of
  a noun that a word of jointness modifies ("a joint statement by A and B", "a
  bilateral treaty with A and B"): the act or relation holds of the
  parties together, and "or" leaves it one party or changes only the
  joint reading;
- path: a verb of starting with its place and a verb with a goal ("started
  in the old town and moved to the suburbs"): one path's two ends, and "or"
  leaves no path;
- focus: the second member is singled out by a focusing adverb right after
  the conjunction ("rare or especially severe cases", "in the town and
  particularly in the port"): the adverb ranks the member within or
  beside the first, and the swap says the same or breaks the phrase.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.needles.binomial_list import ANTONYM_NOUNS, BINOMIALS, OF_TERMS
from engine.needles.coordination_symmetric_verbs import SYMMETRIC_OBJECT_VERBS

if TYPE_CHECKING:
    from spacy.tokens import Token

# particles of place or direction, and the bare adverbs of place that pair the same way ("at home and abroad":
# everywhere; "from home or abroad" names the same set)
_PARTICLES = frozenset(
    "in out up down back forth to fro on off over under here there around about through "
    "home abroad overseas away inside outside indoors outdoors upstairs downstairs".split()
)
# words whose "from"/"against"/"to" phrase names what is kept off: every member at once
_PROTECTING = frozenset(
    "protect protection protected shield shielded safe safety immune immunity defend defence defense guard "
    "powerless helpless insulate insulated shelter sheltered exempt exemption spare spared".split()
)
_PROTECTION_PREPOSITIONS = frozenset({"from", "against", "to"})
# predicates that compare a subject's members with one another ("the exports of A and B are similar")
_COMPARING_WORDS = frozenset(
    "similar different identical alike equal equivalent comparable same related linked connected compatible "
    "incompatible parallel distinct analogous interchangeable indistinguishable unrelated dissimilar".split()
)
# dependents a member of a term's continued object may have ("the freedom of the press and speech")
_TERM_MEMBER_DEPENDENTS = ("cc", "conj", "punct", "det")
# dependents of a class pair's nouns that modify the pair as a whole
_CLASS_DEPENDENTS = ("cc", "conj", "punct", "det", "poss", "prep", "relcl", "acl")
# verbs of a joint or symmetric act, by where their parties stand (one table for the con rule's checks):
# "subject": a coordinated subject acts together ("A and B met", engine.needles.subject_swap);
# "object": a coordinated object is joined or set apart at once ("merged A and B", engine.needles.conjunctions);
# "with": the "with" phrase names the other parties ("met with A and B": one meeting);
# "compared": a subject whose members are compared with one another ("the rules in A and B differ")
_JOINT_VERBS_BY_ROLES = {
    "subject object with": "meet merge unite collaborate negotiate partner reconcile intermarry",
    "subject object": "marry divorce combine join share co-write co-found cofound",
    "subject with": "ally cooperate co-operate converse confer integrate team mingle",
    "subject object compared": "differ",
    "subject compared": "coincide overlap diverge converge match clash correlate resemble",
    "subject": "agree disagree compete fight collide quarrel argue debate discuss talk speak split gather "
    "assemble reunite coexist correspond communicate tie draw embrace kiss hug sign co-sign cosign co-host "
    "cohost co-author coauthor",
    "object": "mix compare connect link separate distinguish pair alternate",
}
HAND_JOINT_VERB_ROLES = {verb: frozenset(roles.split()) for roles, verbs in _JOINT_VERBS_BY_ROLES.items() for verb in verbs.split()}
# and their WordNet synonyms for the "object" role ("divided A and B" as "separated A and B")
JOINT_VERB_ROLES = HAND_JOINT_VERB_ROLES | {
    verb: HAND_JOINT_VERB_ROLES.get(verb, frozenset()) | {"object"} for verb in SYMMETRIC_OBJECT_VERBS
}
# nouns of a joint act or relation: their "with"/"of" phrase names its parties ("talks with A and B",
# "the merger of A and B")
_PARTY_NOUNS = frozenset(
    "meeting meetings talk talks negotiation negotiations summit dialogue conversation conversations consultation "
    "consultations agreement agreements deal deals treaty treaties pact accord alliance alliances partnership "
    "partnerships merger mergers union coalition collaboration cooperation co-operation rivalry rivalries "
    "relationship relationships relation relations ties tie friendship marriage feud dispute disputes conflict "
    "conflicts war wars clash clashes match game final contest duel truce ceasefire reconciliation "
    "joint-venture venture ventures".split()
)
_PARTY_PREPOSITIONS = frozenset({"with", "of"})
# words of jointness on a noun: every phrase of the noun names the parties together ("a joint bid by A and B")
# the prepositions that name the parties of a joint noun ("a joint bid by A and B"; not its topic, "on A and B")
_JOINT_PREPOSITIONS = frozenset({"by", "with", "of", "from"})
_JOINT_WORDS = frozenset("joint mutual bilateral trilateral multilateral collective combined shared".split())
# the start of a path ("started in A and moved to B"): its place, and the goal phrase of the verb after
_STARTING_VERBS = frozenset({"start", "begin"})
_SOURCE_PREPOSITIONS = frozenset({"in", "at", "from"})
_GOAL_PREPOSITIONS = frozenset({"to", "into", "toward", "towards"})
# focusing adverbs that single out the member after the conjunction ("and especially", "or particularly")
_FOCUS_ADVERBS = frozenset("especially particularly notably specifically chiefly mainly mostly primarily principally".split())
# the personal pronouns of one sex: a masculine one beside a feminine one is one generic person ("his or her")
_PRONOUN_GENDER = {w: "m" for w in ("he", "him", "his", "himself")} | {w: "f" for w in ("she", "her", "hers", "herself")}


def joint_refusal(token: Token) -> str:
    """Why the swap of the conjunction `token` breaks a fixed phrase or a
    joint reading ("" when none of these classes holds)."""
    doc = token.doc
    if token.i == 0 or token.i + 1 >= len(doc):
        return ""
    before, after = doc[token.i - 1], doc[token.i + 1]
    if before.is_alpha and before.lower_ == after.lower_:
        return "reduplication"
    if before.lower_ in _PARTICLES and after.lower_ in _PARTICLES and _bare(before) and _bare(after):
        return "particle pair"
    if f"{before.lower_} {token.lower_} {after.lower_}" in BINOMIALS and _single_words(before, token, after):
        return "binomial"
    if _term_of(token):
        return "fixed term"
    if _class_pair(before, token, after):
        return "class pair"
    if _pronoun_pair(before, token, after):
        return "pronoun pair"
    if _one_thing_compound(before, token, after):
        return "one-thing compound"
    if _symmetric_predicate(token):
        return "symmetric predicate"
    if _listed_subject(token):
        return "subject"
    if _protection(token):
        return "protection"
    if _joint_party(token):
        return "joint party"
    if _focus(token):
        return "focus"
    if _path_ends(token):
        return "path"
    return ""


def _path_ends(token: Token) -> bool:
    """Two verbs giving one path's two ends: the first a verb of starting
    with a phrase of place ("started in the old town"), the second with a
    goal ("and moved to the suburbs"): one movement from the one to the
    other, and "or" leaves no path (issue 27, session-20 read)."""
    first = token.head
    if first.pos_ != "VERB" or first.lemma_.lower() not in _STARTING_VERBS:
        return False
    seconds = [c for c in first.children if c.dep_ == "conj" and c.i > token.i and c.pos_ == "VERB"]
    return (
        len(seconds) == 1
        and any(
            c.dep_ == "prep" and c.lower_ in _SOURCE_PREPOSITIONS and c.i < token.i
            and any(o.dep_ == "pobj" and o.pos_ in ("NOUN", "PROPN") for o in c.children)
            for c in first.children
        )  # a place, not "at once"
        and any(c.dep_ == "prep" and c.lower_ in _GOAL_PREPOSITIONS for c in seconds[0].children)
    )


def _joint_party(token: Token) -> bool:
    """The coordination names the parties of one joint act or relation: the
    object of "with" under a verb of meeting, negotiating or joining; the object of "with"/"of" under a noun of such an act or
    relation, also when the parser hangs the phrase on the verb that takes
    the noun ("held talks with A and B"); or in the "by"/"with"/"of"/"from" phrase
    of a noun that a word of jointness modifies ("a joint statement by A and B")."""
    first = token.head
    while first.dep_ == "conj" and first.head.i != first.i:
        first = first.head
    if first.dep_ != "pobj" or first.head.dep_ not in ("prep", "agent", "dative"):
        return False
    preposition = first.head
    holder = preposition.head
    nouns = [holder]
    if holder.pos_ in ("VERB", "AUX"):
        nouns += [c for c in holder.children if c.dep_ in ("dobj", "attr")]  # "held talks with", "struck a deal with"
    if preposition.lower_ in _JOINT_PREPOSITIONS and any(_jointly_modified(n) for n in nouns if n.pos_ in ("NOUN", "PROPN")):
        return True  # "a joint statement by A and B", "signed a bilateral pact with A and B"
    if preposition.lower_ not in _PARTY_PREPOSITIONS:
        return False
    if preposition.lower_ == "with" and holder.pos_ in ("VERB", "AUX") and joint_verb(holder, "with"):
        return True  # "met with A and B"
    # "of" joins a noun to its parties ("the merger of A and B"); a verb takes no "of" party
    return any(n.pos_ == "NOUN" and n.lower_ in _PARTY_NOUNS for n in nouns if n.i == holder.i or preposition.lower_ == "with")


def joint_verb(verb: Token, role: str) -> bool:
    """`verb` is a verb of a joint or symmetric act whose parties stand in
    `role` ("subject", "object", "with", "compared": JOINT_VERB_ROLES)."""
    return role in JOINT_VERB_ROLES.get(verb.lemma_.lower(), ())


def _jointly_modified(noun: Token) -> bool:
    return any(c.dep_ in ("amod", "compound") and c.lower_ in _JOINT_WORDS for c in noun.children)


def _focus(token: Token) -> bool:
    """A focusing adverb right after the conjunction ("and especially", "or
    particularly", "and in particular", "and above all")."""
    doc = token.doc
    following = [t.lower_ for t in doc[token.i + 1 : min(token.sent.end, token.i + 3)]]
    return bool(following) and (following[0] in _FOCUS_ADVERBS or following[:2] in (["in", "particular"], ["above", "all"]))


def _symmetric_predicate(token: Token) -> bool:
    """The conjunction's coordination lies inside (not at the top of) the
    subject of a predicate that compares the subject's members with one
    another: "be" + a comparing adjective or noun without a complement of
    its own ("are similar", "are the same"; not "are similar to X"), or a
    comparing verb without an object ("differ"; not "differ from X")."""
    node = token.head
    subject = None
    while node.head.i != node.i:
        if node.dep_ in ("nsubj", "nsubjpass"):
            subject = node
            break
        node = node.head
    if subject is None or subject.i == token.head.i or any(c.i == token.i for c in subject.children):
        return False  # the coordination is the subject itself: the con rule's "subject"
    verb = subject.head
    if verb.lemma_.lower() == "be":
        predicates = [c for c in verb.children if c.dep_ in ("acomp", "attr")]
        return any(
            p.lemma_.lower() in _COMPARING_WORDS and not any(c.dep_ in ("prep", "xcomp", "ccomp") for c in p.children)
            for p in predicates
        )
    return joint_verb(verb, "compared") and not any(
        c.dep_ in ("dobj", "prep", "ccomp", "xcomp") for c in verb.children
    )


def _listed_subject(token: Token) -> bool:
    """The coordination continues a subject's apposition after a comma: the
    parser's "A, B and C are" (B the apposition of A, C the conjunct of B)."""
    first = token.head
    while first.dep_ == "conj" and first.head.i != first.i:
        first = first.head
    if first.dep_ != "appos" or first.head.dep_ not in ("nsubj", "nsubjpass"):
        return False
    between = first.doc[first.head.i + 1 : first.left_edge.i]
    return any(t.text == "," for t in between)


def _term_of(token: Token) -> bool:
    """The coordination is the object of "of" under a head noun and a member
    makes a WordNet term "X of Y" with that head, first or later ("economies
    of scale and scope", "the freedom of assembly and speech", "the freedom
    of the press and speech"); every member a bare noun (an article
    allowed), or the pair joined with "of" repeated ("freedom of speech and
    of the press"): the pair continues a term, and "or" names no term."""
    first = token.head
    while first.dep_ == "conj" and first.head.i != first.i:
        first = first.head
    if first.dep_ == "pobj" and first.head.lower_ == "of" and _common_noun(first) and first.i < token.i:
        holder = first.head.head
        members = [first, *first.conjuncts]
        if holder.pos_ == "NOUN" and all(_common_noun(m) and _unmodified(m, _TERM_MEMBER_DEPENDENTS) for m in members):
            return any(_of_term(holder, m) for m in members)
    return _repeated_of_term(token)


def _repeated_of_term(token: Token) -> bool:
    """"X of A and of [the] B" read on the words, as the parser may hang the
    second "of" anywhere ("freedom of speech and of worship" with the second
    "of" on the verb): a member makes a term with X."""
    doc = token.doc
    before = doc[token.i - 2] if token.i >= 2 and doc[token.i - 1].text == "," else doc[token.i - 1]
    k = token.i + 1
    if before.dep_ != "pobj" or before.head.lower_ != "of" or before.head.head.pos_ != "NOUN":
        return False
    if k + 1 >= token.sent.end or doc[k].lower_ != "of":
        return False
    k += 2 if doc[k + 1].lower_ == "the" and k + 2 < token.sent.end else 1
    after, holder = doc[k], before.head.head
    if after.pos_ not in ("NOUN", "VERB") or after.dep_ in ("compound", "amod", "poss", "nmod"):
        return False
    return _of_term(holder, before) or _of_term(holder, after)


def _common_noun(word: Token) -> bool:
    """A noun, or a lower-case word the tagger took for a name ("freedom of association": PROPN)."""
    return word.pos_ == "NOUN" or word.pos_ == "PROPN" and word.is_lower


def _of_term(holder: Token, member: Token) -> bool:
    return (holder.lemma_.lower(), member.lemma_.lower()) in OF_TERMS or (holder.lemma_.lower(), member.lower_) in OF_TERMS


def _class_pair(before: Token, token: Token, after: Token) -> bool:
    """Two bare plural nouns joined by "and" whose lemmas WordNet marks as
    antonyms ("men and women", "winners and losers"): the whole class."""
    if token.lower_ != "and" or not (before.tag_ == after.tag_ == "NNS"):
        return False
    if not _single_words(before, token, after):
        return False
    # "the men and women of the fleet", "our men and women": what modifies the pair; not "young men", "two men"
    if not (_unmodified(before, _CLASS_DEPENDENTS) and _unmodified(after, _CLASS_DEPENDENTS)):
        return False
    return tuple(sorted((before.lemma_.lower(), after.lemma_.lower()))) in ANTONYM_NOUNS


def _pronoun_pair(before: Token, token: Token, after: Token) -> bool:
    """A masculine and a feminine personal pronoun side by side and joined
    ("his or her", "she and he", "him or her", "himself or herself"; not
    "thanked him and her sister")."""
    if not _single_words(before, token, after):
        return False
    genders = {_PRONOUN_GENDER.get(before.lower_), _PRONOUN_GENDER.get(after.lower_)}
    return genders == {"m", "f"}


def _one_thing_compound(before: Token, token: Token, after: Token) -> bool:
    """Two bare nouns coordinated as the modifier of one singular noun ("a
    research and development centre"): the parser's first noun as the
    compound (or nmod) of the head and the second as its conjunct, or both as
    compounds of the head, and nothing else in the pair."""
    if before.pos_ != "NOUN" or after.pos_ != "NOUN" or before.dep_ not in ("compound", "nmod"):
        return False
    noun = before.head
    if noun.i <= after.i or noun.tag_ != "NN" or noun.pos_ != "NOUN":
        return False
    joined = after.dep_ == "conj" and after.head.i == before.i or after.dep_ in ("compound", "nmod") and after.head.i == noun.i
    if not joined or after.i + 1 != noun.i:
        return False  # "a research and development budget": the head just after the pair
    if before.i > 0 and before.doc[before.i - 1].text == ",":
        return False  # the end of a longer list ("race, ethnicity, nationality and citizenship status")
    return _unmodified(before, allowed=("cc", "conj")) and _unmodified(after)


def _unmodified(word: Token, allowed: tuple[str, ...] = ("cc", "conj", "punct")) -> bool:
    """No dependent of `word` but the coordination's own ("men" of "men and
    women", not "young men")."""
    return all(c.dep_ in allowed for c in word.children)


def _bare(token: Token) -> bool:
    """A particle standing alone, without an object of its own ("in" of "in
    and out", not "in" of "in Paris and out of town"), and not the "to" of
    an infinitive ("at home and to enrich those abroad")."""
    return token.tag_ != "TO" and not any(c.dep_ == "pobj" for c in token.children)


def _single_words(before: Token, token: Token, after: Token) -> bool:
    """The conjunction joins the two words themselves, as whole conjuncts or
    as the two modifiers of one noun ("research and development costs"),
    not the last word of one phrase to the first of the next ("the media
    and the public")."""
    return after.head.i == before.i and after.dep_ == "conj" or after.head.i == before.head.i


def _protection(token: Token) -> bool:
    """The coordination is the object of "from"/"against"/"to" under a
    word of protection or immunity ("protection from A and B")."""
    first = token.head
    while first.dep_ == "conj" and first.head.i != first.i:
        first = first.head
    if first.dep_ == "amod" and first.head.i > first.i:
        first = first.head  # the kinds of danger: "against sudden and violent storms"
    if first.dep_ != "pobj" or first.head.lower_ not in _PROTECTION_PREPOSITIONS:
        return False
    guards = [first.head.head]
    if first.head.head.pos_ in ("VERB", "AUX") and first.head.i > 0:
        guards.append(first.doc[first.head.i - 1])  # "gives the village protection from A and B": the phrase on the verb
    if first.head.head.dep_ == "dobj":
        guards.append(first.head.head.head)  # "protects the village against A and B": the phrase on the object
    return any(g.lemma_.lower() in _PROTECTING or g.lower_ in _PROTECTING for g in guards)
