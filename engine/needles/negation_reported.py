"""The neg needle's second form: negate the clause a writer reports ("Officials said
(that) the plan would cost more" -> "... the plan would not cost more").

`negate` (engine.needles.negation) refuses a root that reports a clause: "not" on
"said" would deny only the saying and leave the report standing. The reported
clause itself is the writer's own words (indirect speech, not a quotation), and
negating its verb changes what the document says was said or found. It is
edited only where the clause is plainly the writer's report of it:

- the root is a verb of saying, finding or thinking with one clausal complement
  (ccomp) that follows it whole, introduced by "that" or by nothing; a clause
  before the verb ('The plan will fail, Walsh said') is refused, since those are
  often quotations whose marks the dataset lost, and so is an indirect question
  ("asked whether ...": no mark but "that");
- the sentence holds no quotation mark at all, and the clause no first- or
  second-person word ("Walsh said we must act" is likely a quotation without its
  marks);
- the root does not deny or doubt its complement ("denied that", "doubted"),
  under which "not" makes a double negative;
- the clause has a subject and a finite verb of its own and does not itself
  report another clause ("said he believed that ...": the same problem one level
  down);
- then every check `negate` makes on a root is made on the clause's verb
  (negation.negate_verb: the predicate, polarity words, adverbs before the
  verb, fixed expressions, quotation state), and with two models both parse
  the clause's verb alike (engine.needles.agreement.complement_agrees).

`reported_negation(sentence)` returns (edit, "") or (None, why). The reporting
verb itself is never negated. Preparation takes this form only
for a document that has no other neg needle (engine.corpus.prepare), so every
needle the first form finds stays as it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.needles.agreement import complement_agrees
from engine.needles.edits import FINITE_TAGS, SUBJECT_DEPS, TextEdit
from engine.needles.negation import _QUOTE_MARKS, _reports, has_negation, negate_verb

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

# verbs that deny or doubt what they report: "denied that X happened" -> "denied that X did not happen"
DENYING_VERBS = frozenset("deny doubt dispute reject refute question dismiss disavow contest".split())
# words of the speaker or the one spoken to: a clause holding one is likely a quotation without its marks
FIRST_AND_SECOND_PERSON = frozenset("i me my mine myself we us our ours ourselves you your yours yourself yourselves".split())


def reported_negation(sent: Span, *, opened: str | None = None) -> tuple[TextEdit | None, str]:
    """(the negation of the clause `sent`'s root reports, "") or (None, why it is
    refused) (module docstring). `opened`: as for engine.needles.negation.negate."""
    if has_negation(sent):
        return None, "already negative"
    if any(m in sent.text for m in _QUOTE_MARKS) or "''" in sent.text or "``" in sent.text:
        return None, "quotation mark in the sentence"
    roots = [t for t in sent if t.dep_ == "ROOT"]
    if len(roots) != 1 or roots[0].pos_ != "VERB" or not _reports(sent, roots[0]):
        return None, "no reported clause"
    root = roots[0]
    if root.lemma_.lower() in DENYING_VERBS:
        return None, "denying verb"
    if not any(c.dep_ in SUBJECT_DEPS for c in root.children) or any(c.dep_ == "mark" for c in root.children):
        return None, "reporting clause is no main clause"
    clauses = [c for c in root.children if c.dep_ in ("ccomp", "parataxis")]
    if len(clauses) != 1 or clauses[0].dep_ != "ccomp" or clauses[0].left_edge.i <= root.i:
        return None, "no one clause after the verb"
    clause = clauses[0]
    if clause.pos_ not in ("VERB", "AUX"):
        return None, "no verb in the clause"
    if any(c.dep_ == "mark" and c.lower_ != "that" or c.tag_ in ("WDT", "WP", "WRB") for c in clause.children):
        return None, "indirect question or subordinate clause"
    if any(t.lower_ in FIRST_AND_SECOND_PERSON for t in clause.subtree):
        return None, "first or second person: a quotation without its marks"
    subjects = [c for c in clause.children if c.dep_ in SUBJECT_DEPS]
    if not subjects or min(s.left_edge.i for s in subjects) <= root.i:
        return None, "no subject of its own"
    auxiliaries = [c for c in clause.children if c.dep_ in ("aux", "auxpass")]
    finite = min(auxiliaries, key=lambda t: t.i) if auxiliaries else clause
    if finite.tag_ not in FINITE_TAGS:
        return None, "no finite verb in the clause"
    if clause.ent_iob_ in ("B", "I"):
        return None, "verb inside a name"
    if _reports(sent, clause) or any(c.dep_ in ("ccomp", "parataxis") for c in clause.children):
        return None, "the clause reports another"
    return negate_verb(sent, clause, subjects, opened, lambda auxes: complement_agrees(sent, root, clause, auxes))
