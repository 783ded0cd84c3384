"""The neg needle: negate the main verb of one sentence (a pure function of its parse).

`negate(sentence)` returns the `TextEdit` that negates the sentence's main
clause, or None when the sentence does not admit a clean negation: each
edit is made only for a reason (`refusal` says which check refused):

- "not" after the first auxiliary of the root ("has worked" -> "has not
  worked", rule neg:aux; after a speaker's adverb that follows it: "has
  therefore not been", "will likely not"), after a copula root ("was" -> "was not",
  neg:copula), otherwise do-support agreeing in tense and person
  ("published" -> "did not publish", "works" -> "does not work", neg:do-support).
- Skipped (None):
  * sentences that already hold a negation or a negative word (not, never,
    no, nothing, nobody, none, neither, nor, hardly, "far from"..., and "n't"
    written with any apostrophe a dataset ships: don"t, didn?t): negating
    them gives a double negative ("Nothing did not come of this");
  * a predicate that is negative already, so that "not" makes a double
    negative: "be/have yet to" ("has yet to", "is yet to"), an adjective or
    adverb completing the root with a negative prefix whose stem is itself a
    word of that part of speech ("unable", "impossible": the WordNet index spaCy's English lemmatizer ships, put on
    the Vocab by `share_lemma_index`; without it the prefix alone refuses),
    or a negative implicative verb ("failed to", "refused to", "lacked");
  * a reporting or attitude verb: a verb of saying (`REPORTING_VERBS`: "X
    said.", "X told reporters"), a root with a clausal complement ("X found
    (that) Y", '"...," X said'): "did not say" leaves the report standing
    and denies only the saying (a document with no other neg needle takes one
    in the reported clause: engine.needles.negation_reported); so is a root outside a quotation of its own
    sentence that holds a finite verb (the verb that frames the quotation);
  * a verb of saying, judging or urging by WordNet ("did not chastise", "did
    not speak with fondness about", "did not call for": engine.needles.
    communication_verbs), or a speech act said with a light verb and its
    noun ("did not pay tribute to", "did not issue a warning"), or a verb
    of speaking to an audience with one for its object ("will not address
    staff", "did not brief reporters"; "does not address the issue" stays a
    claim): the document mostly gives what was said beside it;
  * a verb that labels its object ("described X as", "called it") with a
    quotation after it: the quoted words are someone's ('did not describe
    the plan as "a disaster"' denies only that they were said);
  * an existential with a definite noun phrase ("Then there is the matter of
    X", "there is Smith's plan"): it presents a known thing, and "there is
    not the matter of X" denies nothing;
  * a comparative subject ("Fewer ships docked than...") or a comparative
    correlative ("the more ..., the more liquid it is");
  * sentences whose root is not a finite main-clause verb: no verbal root,
    no subject, inversion, an infinitive, a root that carries a subordinator
    ("Because the river flooded the town."), a subject that is a relative
    word or holds one ("only one of which was built": a relative clause cut
    from its noun, or a list entry), a root inside a name (an entity
    token; for do-support, a lemma that is no verb of the lexicon: "van" of
    "Pieter van der Laan" taken as the verb), and a past form that the parser took as the
    root although it is a reduced relative ("The security brought about by
    the settlement has led..."): another finite verb follows with no subject
    of its own and no conjunction before it;
  * an adverb before the auxiliary, copula or verb that is not the speaker's
    ("very largely is fixed", "strongly confirmed" -> "strongly did not
    confirm"), or for do-support any other word there ("more than tripled"):
    "not" would land after it; the speaker's adverbs ("probably", "surely")
    stand before "not" wherever they are (engine.needles.negation_adverbs);
  * any edit inside a quotation, including one opened in an earlier sentence
    of the paragraph (`quote_open_before`), or inside one under the opposite
    guess of that state; a sentence that opens or closes a quotation it
    does not close or open (`unbalanced_quotation`);
  * a root modified by "also", "too", "as well", "instead", "still" or
    "already", which read oddly under negation ("has not also introduced",
    "could not still be challenged");
  * with two models (engine.needles.agreement), a sentence whose root,
    auxiliaries or subject the second model parses differently;
  * a root that frames a claim made elsewhere ("denied cutting", "is
    believed to lie", "It will be seen ... that ..."), a question, and a
    "not" that would break a fixed expression ("may well", "had better",
    "have but to", "rather small"): engine.needles.negation_frames;
  * a word of the clause that "not" would interact with: a negative
    quantity ("little evidence", "did little to", "very few visitors"),
    "rarely", "without" ("left without paying"), or a universally
    quantified subject whose scope the negation would make a guess ("All of
    the ships did not return"): engine.needles.negation_polarity.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from engine.needles.agreement import verb_agrees
from engine.needles.communication_verbs import COMMUNICATION_VERBS
from engine.needles.edits import FINITE_TAGS, SUBJECT_DEPS, TextEdit, _inside_quotes, _offset, quote_open_before, sentence_text
from engine.needles.name_kind_nouns import GROUP_FIRST_NOUNS, PERSON_FIRST_NOUNS
from engine.needles.negation_adverbs import adverb_before, adverbial_in_subject, not_after
from engine.needles.negation_frames import SPEECH_NOUNS, frame_refusal, idiom_refusal, reduced_relative
from engine.needles.negation_polarity import polarity_refusal

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

NEGATION_WORDS = frozenset({"not", "n't", "never", "no"})
# words that make the sentence already negative (or near-negative): one more
# "not" would be a double negative
NEGATIVE_WORDS = frozenset(
    {"nothing", "nobody", "none", "neither", "nor", "nowhere", "noone", "no-one", "hardly", "barely", "scarcely", "seldom"}
)
# "n't" with the apostrophe as datasets ship it: ’ ' " ” ? ` ´ (mojibake of a curly apostrophe)
CONTRACTED_NOT = re.compile(r"[a-z]n(?:['’”`´?]|\"\??)t\b", re.IGNORECASE)
AUX_DEPS = frozenset({"aux", "auxpass"})
DO_FORMS = {"VBD": "did", "VBZ": "does", "VBP": "do"}
# "also", "too", "still", "already" hold only of a positive ("could not still be challenged")
_ODD_UNDER_NEGATION = frozenset({"also", "too", "instead", "still", "already"})
# the reported or believed content of the root ("said (that) ...", "thinks ...")
_REPORTED_DEPS = frozenset({"ccomp", "parataxis"})
_QUOTE_MARKS = ('"', "“", "”", "«", "»")
# verbs of saying (VerbNet's say-37.7, tell-37.2, ask and tweet-like
# classes): negated, the report stays and only the saying is denied, with or
# without the reported clause in the same sentence
REPORTING_VERBS = frozenset(
    "say tell ask add state claim report announce explain note remark reply respond tweet comment "
    "argue insist declare protest assert allege concede admit acknowledge write "
    # verbs of agreeing, which introduce the speaker's own words next ("X agreed."
    # then X's quotation; "Y echoed that view")
    "agree concur echo".split()
)
# verbs that put a label or description on their object (VerbNet's
# characterize-29.2, dub-29.3 and judgement classes): with a quotation after
# them, the quoted words are the subject's
LABELLING_VERBS = frozenset(
    "describe characterize characterise portray depict call label term dub brand name hail denounce condemn "
    "praise slam blast criticize criticise quote cite refer".split()
)
# a speech act said with a light verb and one of negation_frames.SPEECH_NOUNS ("paid tribute to X", "offered
# condolences", "made a statement", "issued a warning"): the document gives what was said beside it, as after a
# verb of saying
LIGHT_VERBS = frozenset({"pay", "give", "make", "issue", "offer", "deliver", "extend", "send", "voice"})
# verbs that are verbs of saying when their object is an audience ("address the staff", "brief reporters",
# "lecture the board") and claims of their own otherwise ("address the issue", "brief" as an adjective): the
# speech is mostly reported next, as after a verb of saying (WordNet's first sense of "address" is not the
# speaking one, so the communication table leaves it out)
AUDIENCE_VERBS = frozenset({"address", "brief", "lecture", "harangue"})
_DEFINITE_DETERMINERS = frozenset({"the", "this", "that", "these", "those"})
# clauses of their own under a verb: a quotation in one is not what the verb labels its object with
_OWN_CLAUSE_DEPS = frozenset({"relcl", "acl", "advcl", "conj", "ccomp", "parataxis"})
_RELATIVE_WORDS = frozenset({"which", "whom", "whose"})
# the predicate's own words: what a negative prefix would make a double negative
_PREDICATE_DEPS = frozenset({"acomp", "attr", "oprd", "xcomp"})
_NEGATIVE_PREFIXES = ("non-", "non", "un", "in", "im", "il", "ir", "dis")
_INDEX_POS = {"ADJ": "adj", "ADV": "adv"}
# one syllable closed by one consonant after one vowel letter ("stag", "hop"; not "help", "tour", "fix", "bow")
_SHORT_CLOSED_SYLLABLE = re.compile(r"^[^aeiouy]*[aeiou][bcdfghjklmnpqrstvz]$")
# verbs whose complement is asserted not to hold ("failed to reach"): negated,
# a double negative ("did not fail to reach")
NEGATIVE_IMPLICATIVES = frozenset({"fail", "refuse", "decline", "neglect", "omit", "cease", "lack"})
LEMMA_INDEX = "lemma_index"  # the lemmatizer's table, on the Vocab (share_lemma_index)
_WORD_SETS: dict[tuple[int, str], frozenset[str]] = {}


def share_lemma_index(nlp: Any) -> None:
    """Put the lemmatizer's WordNet index (table "lemma_index": the words of
    each part of speech) on `nlp`'s Vocab, where every Doc it makes can reach
    it: `negative_prefixed` reads it there."""
    if "lemmatizer" not in getattr(nlp, "pipe_names", ()):
        return
    lookups = nlp.get_pipe("lemmatizer").lookups
    if lookups.has_table(LEMMA_INDEX) and not nlp.vocab.lookups.has_table(LEMMA_INDEX):
        nlp.vocab.lookups.set_table(LEMMA_INDEX, lookups.get_table(LEMMA_INDEX))


def has_negation(sent: Span) -> bool:
    if CONTRACTED_NOT.search(sent.text):
        return True
    for t in sent:
        lower = t.lower_
        if t.dep_ == "neg" or lower in NEGATION_WORDS or t.lemma_.lower() in NEGATION_WORDS or lower in NEGATIVE_WORDS:
            return True
        if lower == "one" and t.i > sent.start and t.nbor(-1).lower_ == "no":
            return True
        # "few" and "little" are negative only as quantities, and only in the
        # negated clause: negation_polarity.polarity_refusal decides that
        previous = t.nbor(-1).lower_ if t.i > sent.start else ""
        if lower == "from" and previous == "far":
            return True  # "was far from my intention" = was not: "not far from" is a double negative
    return False


def negate(sent: Span, *, opened: str | None = None) -> TextEdit | None:
    """The negation edit of `sent`, or None. `opened`: the mark of a quotation
    still open at the sentence start (default: read from the sentence's document)."""
    return _negation(sent, opened)[0]


def refusal(sent: Span, *, opened: str | None = None) -> str:
    """Why `negate` refuses `sent` ("" when it does not): the check that refused."""
    return _negation(sent, opened)[1]


def _negation(sent: Span, opened: str | None) -> tuple[TextEdit | None, str]:
    if has_negation(sent):
        return None, "already negative"
    roots = [t for t in sent if t.dep_ == "ROOT"]
    if len(roots) != 1:
        return None, "not one root"
    root = roots[0]
    if root.pos_ not in ("VERB", "AUX") or not _main_clause(sent, root):
        return None, "no main-clause verb"
    subjects = [c for c in root.children if c.dep_ in SUBJECT_DEPS]
    if not subjects:
        return None, "no subject"
    if root.ent_iob_ in ("B", "I"):
        return None, "root inside a name"  # "van" of "Antonius van den Broek"
    if _reports(sent, root):
        return None, "reporting or attitude verb"
    return negate_verb(sent, root, subjects, opened, lambda auxiliaries: verb_agrees(sent, root, auxiliaries))


def _communicates(root: Token) -> bool:
    """The root, or the infinitive it leads to ("went on to praise"), is a
    verb of saying, judging or urging by WordNet (engine.needles.communication_verbs:
    "speak", "defend", "chastise", "call for", "warn"): "not" on it denies
    only the act of saying, while the document mostly gives what was said
    beside it (a quotation, a "calling it ..." clause, the next sentence),
    which the reading protocol marks W (issue 27: 8 of the 9 neg defects of
    the read of short news articles no rule was tuned on). Abstain."""
    verbs = [root, *(c for c in root.children if _infinitive(c) and c.pos_ == "VERB")]
    for verb in verbs:
        lemma = verb.lemma_.lower()
        # a verb and its particle or preposition right after it: "called for", "spoke out"
        after = [f"{lemma}_{c.lower_}" for c in verb.children if c.dep_ in ("prt", "prep") and c.i == verb.i + 1]
        if lemma in COMMUNICATION_VERBS or any(p in COMMUNICATION_VERBS for p in after):
            return True
        if lemma in LIGHT_VERBS and any(c.dep_ == "dobj" and c.lemma_.lower() in SPEECH_NOUNS for c in verb.children):
            return True  # "paid tribute to the donors", next sentence: '"Thank you ...," he said'
        if lemma in AUDIENCE_VERBS and any(c.dep_ == "dobj" and _audience(c) for c in verb.children):
            return True  # "will address staff at the base", then what she will tell them
    return False


def _audience(noun: Token) -> bool:
    """`noun` names people or a body of them: a person's or group's name, a
    personal pronoun, or a noun whose first WordNet sense is a person or a
    group ("staff", "peers", "the relatives", "the nation"), not an issue."""
    if noun.ent_type_ in ("PERSON", "NORP", "ORG"):
        return True
    if noun.tag_ == "PRP":
        return noun.lower_ != "it"
    lemma = noun.lemma_.lower()
    return lemma in PERSON_FIRST_NOUNS or lemma in GROUP_FIRST_NOUNS


def negate_verb(
    sent: Span, root: Token, subjects: list[Token], opened: str | None, agrees: Callable[[list[Token]], bool]
) -> tuple[TextEdit | None, str]:
    """The checks and the edit that put "not" on the finite verb `root` with its
    `subjects` (the sentence's root, or a reported clause's verb:
    engine.needles.negation_reported); `agrees`: whether the second model parses
    the verb and these auxiliaries alike."""
    if _negative_predicate(sent, root):
        return None, "negative predicate"
    polarity = polarity_refusal(sent, root)
    if polarity:
        return None, polarity
    text = sentence_text(sent)
    if opened is None:
        opened = quote_open_before(sent)
    if _frames_quotation(sent, text, _offset(sent, root), opened) or _labels_with_quotation(root):
        return None, "verb framing a quotation"
    framing = frame_refusal(sent, root, text, opened)
    if framing:
        return None, framing
    if _communicates(root):
        return None, "verb of communication"  # the root's, or a reported clause's ("said the mayor criticized ...")
    if _definite_existential(root, subjects):
        return None, "existential with a definite noun phrase"
    if unbalanced_quotation(text):
        return None, "quotation across sentences"
    if any(t.lower_ == "than" for t in sent) and any(t.tag_ in ("JJR", "RBR") for s in subjects for t in s.subtree):
        return None, "comparative subject"  # "Fewer ships docked than in May" -> "did not dock ... than"
    if any(t.lower_ == "the" and t.i + 1 < sent.end and t.nbor().tag_ in ("JJR", "RBR") for t in sent):
        return None, "comparative correlative"  # "the more ..., the more liquid it is" -> "it is not"
    auxiliaries = sorted((c for c in root.children if c.dep_ in AUX_DEPS), key=lambda t: t.i)
    subject_end = max(s.right_edge.i for s in subjects)
    edit = _edit(sent, root, auxiliaries, min(s.left_edge.i for s in subjects), subject_end)
    if edit is not None and edit.rule == "neg:do-support" and adverbial_in_subject(sent, subjects, root):
        return None, "adverbial phrase before do-support"  # "Congress on a bipartisan basis did not vote"
    if edit is None:
        return None, "no clean edit"
    if idiom_refusal(sent, edit):
        return None, "idiom broken by not"
    if any(_inside_quotes(text, at, opened=mark) for at in (_offset(sent, root), edit.start) for mark in {opened, ""}):
        return None, "inside a quotation"  # under the quotation state read, or under none: a wrong state cannot let it through
    if not agrees(auxiliaries):
        return None, "models disagree"
    return edit, ""


def _edit(sent: Span, root: Token, auxiliaries: list[Token], subject_start: int, subject_end: int) -> TextEdit | None:
    if auxiliaries:
        first = auxiliaries[0]
        if first.i < subject_start or first.lower_ == "to" or first.tag_ not in FINITE_TAGS:
            return None  # inversion ("Had he known"), infinitive, or no finite auxiliary
        if adverb_before(sent, subject_end, first, do_support=False):
            return None  # "very largely is fixed": "very largely is not fixed"
        last = not_after(sent, first)  # past the speaker's adverbs after it: "has therefore not been"
        at = _offset(sent, last) + len(last.text)
        return TextEdit(at, at, "", " not", "neg:aux")
    if root.i < subject_start:
        return None
    if root.pos_ == "AUX" or root.lemma_ == "be":  # copula ("was" -> "was not", "there are" -> "there are not")
        if root.tag_ not in FINITE_TAGS or adverb_before(sent, subject_end, root, do_support=False):
            return None
        last = not_after(sent, root)  # "is therefore not"
        at = _offset(sent, last) + len(last.text)
        return TextEdit(at, at, "", " not", "neg:copula")
    do_form = DO_FORMS.get(root.tag_)
    lemma = _base_form(root)
    if do_form is None or not lemma or not lemma.isalpha() or not _known_verb(root, lemma) or reduced_relative(root):
        return None
    if adverb_before(sent, subject_end, root, do_support=True):
        return None  # "strongly confirmed": "strongly did not confirm"
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
        if child.dep_ in SUBJECT_DEPS and (child.tag_ in ("WDT", "WP") or relative_subject(child)):
            return False  # "which was built..." or "only one of which was built" split off as its own sentence
    return not any(  # "as well" (not "as well as")
        t.lower_ == "well" and t.i > sent.start and t.nbor(-1).lower_ == "as" and (t.i + 1 >= sent.end or t.nbor().lower_ != "as")
        for t in sent
    )


def relative_subject(subject: Token) -> bool:
    """The subject holds a relative word of its own clause ("only one of
    which was built", "most of whom are"), reached without crossing a
    relative clause inside it ("the house which he built is"): the clause is a
    relative one, cut from its sentence or from a list entry."""
    for t in subject.subtree:
        if t.lower_ not in _RELATIVE_WORDS:
            continue
        node = t
        while node.i != subject.i and node.dep_ not in ("relcl", "acl") and node.head.i != node.i:
            node = node.head
        if node.i == subject.i:
            return True
    return False


def _labels_with_quotation(root: Token) -> bool:
    """A verb that puts a label or description on its object ("described the
    plan as "a disaster"", "called it "a betrayal"") with a quotation after it:
    the quoted words are someone's, and "did not describe" denies only that
    they were said of it. A quotation in a clause of its own ("condemned by
    critics, who call them "traitors"") is not the verb's."""
    if root.lemma_.lower() not in LABELLING_VERBS:
        return False
    marks = [t for t in root.sent if any(m in t.text for m in _QUOTE_MARKS)]
    for mark in marks[::2]:  # the opening marks; their first word says where the quotation hangs
        if mark.i < root.i or mark.i + 1 >= root.sent.end:
            continue
        node = root.doc[mark.i + 1]  # the quotation must complete this verb, not a clause of its own below it
        while node.i != root.i and node.dep_ not in _OWN_CLAUSE_DEPS and node.head.i != node.i:
            node = node.head
        if node.i == root.i:
            return True
    return False


def _definite_existential(root: Token, subjects: list[Token]) -> bool:
    """An existential "there is" whose noun phrase is definite ("there is the
    matter of X", "then there is Smith's plan"): it presents a known thing,
    and "there is not the matter of X" is no denial of it."""
    if not any(s.dep_ == "expl" for s in subjects):
        return False
    for noun in root.children:
        if noun.dep_ not in ("attr", "nsubj", "nsubjpass") or noun.i < root.i:
            continue
        children = list(noun.children)
        if noun.tag_ == "PRP" or noun.pos_ == "PROPN" and not any(d.dep_ in ("det", "nummod") for d in children):
            return True
        if any(d.dep_ == "det" and d.lower_ in _DEFINITE_DETERMINERS for d in children):
            return True
        if any(d.dep_ == "poss" and _definite_possessor(d) for d in children) and not any(d.dep_ in ("det", "nummod") for d in children):
            return True  # "Smith's plan", "its plan", not "44,520 sailors' names"
    return False


def _definite_possessor(possessor: Token) -> bool:
    """A possessor that makes its noun phrase definite: a name, a possessive
    pronoun, or a noun with a definite determiner ("the city's plan")."""
    if possessor.pos_ == "PROPN" or possessor.tag_ == "PRP$":
        return True
    return any(d.dep_ == "det" and d.lower_ in _DEFINITE_DETERMINERS for d in possessor.children)


def _reports(sent: Span, root: Token) -> bool:
    """A verb (not a copula: "the problem is that...") whose complement is a
    clause: what was said, thought or found ("said (that) X", '"X," he said').
    A clause before the root counts only when a comma, colon or quotation
    mark closes it (a clause joined by ";" is a parse of two sentences)."""
    if root.pos_ != "VERB":
        return False
    if root.lemma_.lower() in REPORTING_VERBS:
        return True  # '"...," the minister said.', "X told reporters", "X asked if"
    if any(_infinitive(c) and _reports_clause(sent, c) for c in root.children):
        return True  # "went on to argue that X", "began to say that X": "not" would land on the report
    return _reports_clause(sent, root)


def _reports_clause(sent: Span, root: Token) -> bool:
    """`root` has a complement clause: after it, or before it closed by a
    comma, colon or quotation mark."""
    for clause in root.children:
        if clause.pos_ not in ("VERB", "AUX") or not _complement_clause(clause, root):
            continue
        if clause.i > root.i:
            return True
        after = root.doc[clause.right_edge.i + 1] if clause.right_edge.i + 1 < sent.end else None
        if after is not None and (after.text in (",", ":") or any(m in after.text for m in _QUOTE_MARKS)):
            return True
    return False


def _infinitive(clause: Token) -> bool:
    """An open complement, or an infinitive the parser hung as an adverbial
    clause ("went on | to argue")."""
    return clause.dep_ == "xcomp" or (clause.dep_ == "advcl" and any(c.dep_ == "aux" and c.lower_ == "to" for c in clause.children))


def unbalanced_quotation(text: str) -> bool:
    """The sentence opens or closes a quotation it does not close or open
    (an odd number of straight marks, unequal curly ones): a quotation that
    spans sentences, whatever state the scan before it read."""
    return text.count('"') % 2 == 1 or text.count("“") != text.count("”")


def _complement_clause(clause: Token, root: Token) -> bool:
    """A clause that completes its verb: a ccomp or parataxis, or an
    adverbial clause after the verb with its own subject and no subordinator
    or wh-adverb ("said even before Friday he had been preparing": the
    parser's advcl for a reported clause; not "when X, Y")."""
    if clause.dep_ in _REPORTED_DEPS:
        return True
    if clause.dep_ not in ("advcl", "dep") or clause.i < root.i:
        return False
    children = list(clause.children)
    if any(c.dep_ == "mark" and c.lower_ in ("that", "whether") for c in children):
        return True  # "protested that X", "asked whether X"
    introduced = any(c.dep_ == "mark" or c.tag_ == "WRB" for c in children)
    return any(c.dep_ in SUBJECT_DEPS for c in children) and not introduced


def _frames_quotation(sent: Span, text: str, at: int, opened: str) -> bool:
    """The root (at offset `at`) is outside a quotation of its sentence that
    holds a finite verb: it introduces quoted speech ('"We will win," he
    told reporters'); a quoted title ("Imprudence") is no speech."""
    if _inside_quotes(text, at, opened=opened):
        return False
    return any(t.tag_ in FINITE_TAGS and _inside_quotes(text, _offset(sent, t), opened=opened) for t in sent)


def _negative_predicate(sent: Span, root: Token) -> bool:
    """The root is a negative implicative verb ("failed to", "has yet to"), or
    an adjective or adverb completing it has a negative prefix ("was unable",
    "seems unlikely", "was an unlikely winner")."""
    if root.lemma_.lower() in NEGATIVE_IMPLICATIVES:
        return True
    if root.lemma_.lower() in ("be", "have") and _yet_to_after(root):
        return True  # "has yet to weigh in", "are yet to be awarded": "not yet"; "does not have yet to" (issue 27, short news)
    words = [c for c in root.children if c.dep_ in _PREDICATE_DEPS]
    words += [a for w in list(words) if w.dep_ == "attr" for a in w.children if a.dep_ == "amod"]  # "an unlikely winner"
    words += [c for w in list(words) for c in w.conjuncts]
    return any(negative_prefixed(w) for w in words)


def _yet_to_after(verb: Token) -> bool:
    """"yet to" right after `verb` ("has yet to", "are yet to be"): the
    negative-implicative "be/have yet to", which "not" turns into a double
    negative or breaks."""
    doc = verb.doc
    k = verb.i + 1
    return k + 1 < verb.sent.end and doc[k].lower_ == "yet" and doc[k + 1].lower_ == "to"


def negative_prefixed(token: Token) -> bool:
    """Whether `token` is an adjective or adverb with a negative prefix: its
    stem after un-, in-, im-, il-, ir-, dis- or non- is itself an adjective
    (adverb) of the lemmatizer's WordNet index ("unable": "able",
    "impossible": "possible"; not "important", "interesting"), or the
    participle of one of its verbs ("unheeded": "heed"). Without the
    index every such prefix counts (refusing is the safe side)."""
    pos = _INDEX_POS.get(token.pos_)
    if pos is None:
        return False
    word = token.lower_
    index = _lemma_index(token, pos)
    verbs = _lemma_index(token, "verb") or frozenset()
    for prefix in _NEGATIVE_PREFIXES:
        stem = word[len(prefix) :]
        if not word.startswith(prefix) or len(stem) < 3:
            continue
        if index is None or stem in index:
            return True
        if stem.endswith("ed") and (stem[:-2] in verbs or stem[:-1] in verbs):
            return True  # a participle: "unheeded" (heed), "unopposed" (oppose)
    return False


def _lemma_index(token: Token, pos: str) -> frozenset[str] | None:
    """The lexicon's words of part of speech `pos` ("adj", "adv", "noun",
    "verb"), or None when the Vocab has no lemma index."""
    lookups = token.vocab.lookups
    if not lookups.has_table(LEMMA_INDEX):
        return None
    table = lookups.get_table(LEMMA_INDEX)
    words = _WORD_SETS.get((id(table), pos))
    if words is None:
        words = _WORD_SETS[(id(table), pos)] = frozenset(table[pos])
    return words


def _base_form(root: Token) -> str | None:
    """The verb's base form for do-support: the lemma, except where spaCy's
    rule lemmatizer strips "-ed" from a verb ending in "e" ("staged" ->
    "stag", "hoped" -> "hop"). A one-syllable verb ending in one vowel and
    one consonant doubles that consonant before "-ed" ("stagged",
    "hopped"), so an undoubled past of such a lemma is the "-e" verb's;
    None (refuse) when the lexicon has no such verb."""
    lemma = root.lemma_.lower()
    if root.tag_ == "VBD" and root.lower_ == lemma + "ed" and _SHORT_CLOSED_SYLLABLE.match(lemma):
        fuller = lemma + "e"
        index = _lemma_index(root, "verb")
        return fuller if index is None or fuller in index else None
    return lemma


def _known_verb(root: Token, lemma: str) -> bool:
    """Do-support rewrites the root as its lemma: the lemma must be a verb of
    the lexicon ("van" of "Antonius van den Broek" tagged as a verb is not)."""
    index = _lemma_index(root, "verb")
    return index is None or lemma in index
