"""Checks that refuse a neg edit whose "not" would not negate the sentence's claim.

Each returns the refusal's reason ("" when the check passes), for
`engine.needles.negation`:

- `frame_refusal`: the root frames a claim made elsewhere, so "not" denies
  the frame and leaves the claim standing:
  * a verb of saying or knowing whose complement is a gerund or infinitive
    clause ("The mayor denied cutting the budget" -> "did not deny": the
    denial is reported, and his words usually follow; "The wreck is
    believed to lie off the cape");
  * an impersonal frame, "it" with an extraposed "that" clause ("It will be
    seen from the figures that the harvest doubled", "It is known that"): the
    claim is the "that" clause, wherever the parser hangs it;
  * a verb of saying whose report is the next sentence ("He outlined the
    changes." then his words in quotation marks; "Others praised the
    ruling." then "A professor said that ..."): "did not outline" denies the
    saying, and the next sentence goes on to say it; so is a light verb with
    a noun of speech ("launched a defense of the plan." then his words);
  * a question ("Who could have foreseen it?", "You think it is safe?"): a
    negated question asks something else and asserts nothing;
  * a verb of saying, accusing, praising or committing whose complement
    holds a quotation ('accused the mayor of "selling the harbour"',
    'pledged "a new bridge"'), or any verb whose infinitive or clausal
    complement is quoted ('vowed to "finish the job"'): the quoted words are
    someone's, and "did not accuse" denies only that they were said
    (`quoted_complement`).
- `idiom_refusal`: "not" would land inside a fixed expression ("may well",
  "would rather", "had better", "have but to", "is but a stream", "was
  rather small", "somewhat better", the adverbs "sure" and "pretty": "I'll
  sure sign"): the result is ungrammatical or a double negative.
- `reduced_relative`: a past form taken as the root is the participle of a
  reduced relative ("Parcels sent after noon arrive late" parsed with "sent"
  as the finite verb): a later finite verb hangs off it with no subject of
  its own and no conjunction or punctuation before it, object or not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.needles.edits import FINITE_TAGS, SUBJECT_DEPS, TextEdit, _inside_quotes, _offset, asks

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

# verbs of saying, asserting, knowing and perceiving-as-evidence (VerbNet's
# say-37.7, conjecture-29.5, declare-29.4, see-30.1 evidential uses and
# the admit/deny pair): with a clause as complement they report or attest a
# claim, and "not" denies the report, not the claim
FRAMING_VERBS = frozenset(
    "say tell report announce state claim allege assert declare affirm maintain insist contend argue "
    "admit acknowledge concede confess deny confirm dispute recall remember recount mention "
    "believe think know understand presume assume reckon consider estimate rumour rumor "
    "see observe note show find".split()
)
# verbs that name what someone said ("outlined the changes", "denied the
# claims", "described the plan"): with a quotation opening the next sentence,
# it is that report, and "did not outline" denies only the saying
SPEAKING_VERBS = frozenset(
    "point outline describe detail explain discuss address stress emphasise emphasize highlight warn urge predict "
    "suggest propose recommend reject defend criticise criticize praise welcome agree reply respond add cite quote".split()
)
# nouns of a speech act that a light verb reports ("launched a defense of",
# "issued a warning", "made an appeal", "paid tribute"): with the next sentence reporting
# speech, as much a frame as the verb they are named after (after one of
# engine.needles.negation's LIGHT_VERBS, a frame wherever it stands)
SPEECH_NOUNS = frozenset(
    "defense defence statement speech remark remarks comment warning appeal plea denial apology apologies pledge "
    "vow promise argument criticism rebuttal response reply announcement tribute homage respects compliment "
    "compliments condolence condolences thanks address testimony".split()
)
_OPENING_QUOTES = ('"', "“", "‘", "«")
_SAYING = frozenset({"say", "tell", "add", "write"})
# after a modal: "may well", "would rather", "would sooner", "had better"
_MODAL_IDIOMS = frozenset({"well", "rather", "sooner", "better"})
# after any verb: "have but to" (= only have to), "is but a stream",
# positive-polarity degree words ("was rather small", "somewhat better", "slightly harder")
# and "not only", "not once" (= never), fixed expressions of their own ("was only 28" -> "was not only 28")
_IDIOM_WORDS = frozenset({"but", "rather", "somewhat", "fairly", "slightly", "only", "once"})
# the same as adverbs only (the adjectives negate: "is not sure of it", "was not pretty"):
# "I'll sure sign" -> "I'll not sure sign", "was pretty close" -> "was not pretty close"
_IDIOM_ADVERBS = frozenset({"sure", "pretty"})
_CLAUSE_DEPS = frozenset({"conj", "advcl", "ccomp", "parataxis"})
# verbs of judging and committing by speech (VerbNet's judgement-33, promise-13.3,
# advise-37.9, the accuse/charge and thank/praise classes): they report words
# that a quotation in their complement gives ("accused X of "..."")
SPEECH_ACT_VERBS = frozenset(
    "accuse charge blame fault credit thank commend congratulate applaud criticize criticise condemn denounce attack "
    "slam blast mock ridicule scold rebuke chide accuse promise pledge vow swear threaten demand order ask beg "
    "implore invite challenge dare call brand dub label".split()
)
# a clause of its own below the root: a quotation there is not the root's complement
_OWN_CLAUSE_DEPS = frozenset({"relcl", "acl", "advcl", "conj", "parataxis", "appos"})


def frame_refusal(sent: Span, root: Token, text: str, opened: str = "") -> str:
    """Why the root frames a claim rather than making one ("" if it does not)."""
    if asks(text):
        return "question"
    lemma = root.lemma_.lower()
    if lemma in FRAMING_VERBS and any(_clausal_complement(c) for c in root.children):
        return "verb framing a claim"
    speaking = lemma in FRAMING_VERBS | SPEAKING_VERBS or any(
        c.dep_ == "dobj" and c.lemma_.lower() in SPEECH_NOUNS for c in root.children
    )
    if speaking and _quotation_follows(sent):
        return "verb introducing the next quotation"
    subjects = [c for c in root.children if c.dep_ in SUBJECT_DEPS]
    if any(s.lower_ == "it" for s in subjects) and any(_extraposed(t, root) for t in sent if t.i > root.i):
        return "impersonal frame"
    if quoted_complement(sent, root, text, opened):
        return "verb reporting quoted words"
    return ""


def quoted_complement(sent: Span, root: Token, text: str, opened: str = "") -> bool:
    """A quotation after the root that completes it: under a verb of saying,
    judging or committing anywhere in its complement ('accused the mayor of
    "selling the harbour"'), under any verb as its infinitive or clausal
    complement ('wanted to "keep things simple"': the complement's verb quoted,
    in lower case, not a title's). A quotation inside a clause of its own
    below the root (a relative clause, a conjunct) is not the root's."""
    speech = root.lemma_.lower() in FRAMING_VERBS | SPEAKING_VERBS | SPEECH_ACT_VERBS
    for token in sent:
        if token.i <= root.i or token.is_punct or not _inside_quotes(text, _offset(sent, token), opened=opened):
            continue
        node = token
        while node.head.i != root.i and node.head.i != node.i and node.dep_ not in _OWN_CLAUSE_DEPS:
            node = node.head
        if node.head.i != root.i or node.dep_ in _OWN_CLAUSE_DEPS:
            continue
        if speech or node.i == token.i and node.dep_ in ("xcomp", "ccomp") and node.pos_ in ("VERB", "AUX") and node.is_lower:
            return True  # the complement's own verb quoted, in lower case (a title's is capitalised: recorded "Let It Be")
    return False


def _extraposed(token: Token, root: Token) -> bool:
    """A clause after the root of an "it" subject that holds the claim: one
    opened by "that" (wherever the parser hangs it: "seen from the figures in
    the report that ...") or a clausal complement of the root or of its
    predicate ("It is clear the program works")."""
    if token.lower_ == "that" and token.dep_ == "mark":
        return True
    if token.dep_ != "ccomp":
        return False
    head = token.head
    return head.i == root.i or head.head.i == root.i and head.dep_ in ("acomp", "attr", "oprd")


def _quotation_follows(sent: Span) -> bool:
    """The next sentence of the document reports speech: it opens with a
    quotation mark, or its root or a parenthetical is a verb of saying
    ("Others praised the ruling." then "A professor said that ...", "X
    disputed it." then "In part, X said, ..."): the reports the root frames."""
    following = (t for t in sent.doc[sent.end :] if not t.is_space)
    first = next(following, None)
    if first is None:
        return False
    if first.text.startswith(_OPENING_QUOTES):
        return True
    clause_heads = (t for t in first.sent if t.dep_ in ("ROOT", "parataxis"))  # "In part, Margulies said, X ..."
    return any(t.lemma_.lower() in _SAYING for t in clause_heads)


def _clausal_complement(child: Token) -> bool:
    """A gerund or infinitive clause completing the verb ("denied cutting",
    "is believed to lie"), as the parser's xcomp."""
    if child.dep_ != "xcomp" or child.pos_ not in ("VERB", "AUX"):
        return False
    return child.tag_ == "VBG" or any(c.lower_ == "to" and c.dep_ == "aux" for c in child.children)


def idiom_refusal(sent: Span, edit: TextEdit) -> str:
    """Why "not" at `edit` would break a fixed expression ("" if it would not):
    the word after it, and the word before it when that is a modal or "had"."""
    after = next((t for t in sent if _offset(sent, t) >= edit.end and not t.is_space), None)
    if after is None:
        return ""
    word = after.lower_
    if word in _IDIOM_WORDS or word in _IDIOM_ADVERBS and after.pos_ == "ADV":
        return "idiom broken by not"
    before = sent.doc[after.i - 1] if after.i > sent.start else None
    modal = before is not None and (before.tag_ == "MD" or before.lower_ == "had")
    if modal and word in _MODAL_IDIOMS and edit.rule == "neg:aux":
        return "idiom broken by not"
    return ""


def reduced_relative(root: Token) -> bool:
    """Whether a past-tense root is more likely a participle modifying its
    subject ("His videos recorded as X while quarantined received...",
    "Abortions carried out after 12 weeks are illegal"): a later finite verb
    hanging off it has no noun subject of its own and no conjunction or
    punctuation before it. An object of the root does not clear it (the
    parser gives the participle one where a time or amount follows it)
    unless the later verb is itself a past form, the participle's likelier place."""
    if root.tag_ != "VBD":
        return False
    has_object = any(c.dep_ in ("dobj", "attr") for c in root.children)
    for verb in root.children:
        if verb.i < root.i or verb.dep_ not in _CLAUSE_DEPS or verb.pos_ not in ("VERB", "AUX"):
            continue
        finite_aux = any(c.dep_ in ("aux", "auxpass") and c.tag_ in FINITE_TAGS for c in verb.children)
        if not (verb.tag_ in FINITE_TAGS or finite_aux):
            continue
        if has_object and verb.tag_ == "VBD" and not finite_aux:
            continue  # "launched a defense of the tweets centered around X": the later past form is the participle
        subjects = [c for c in verb.children if c.dep_ in SUBJECT_DEPS]
        if subjects and all(s.pos_ in ("NOUN", "PROPN", "PRON") for s in subjects):
            continue
        between = root.doc[root.i + 1 : verb.left_edge.i]
        if not subjects and any(t.pos_ == "CCONJ" or t.text in (",", ";", ":") for t in between):
            continue  # "He left the house and went home."
        return True
    return False
