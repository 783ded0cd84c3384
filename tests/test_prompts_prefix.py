"""engine/prompts/prefix.py: the prefix key siblings share, on real rendered prompts."""

from __future__ import annotations

from engine.contracts import Message
from engine.prompts import load_prompt
from engine.prompts.prefix import prefix_key

ORIGINAL = "The river was wide. Boats sailed on it. Night fell over the town."
NEGATED = "The river was wide. Boats did not sail on it. Night fell over the town."


def rendered(first: str, second: str, prompt: str = "bands") -> tuple[Message, ...]:
    return load_prompt(prompt).render(first, second)[0].messages


def test_siblings_of_one_document_share_a_key_and_other_documents_do_not():
    none, neg = rendered(ORIGINAL, ORIGINAL), rendered(ORIGINAL, NEGATED)
    key = prefix_key(none)
    assert key is not None and len(key) == 16
    assert prefix_key(neg) == key  # same instructions and Document 1: the needle is in Document 2
    assert prefix_key(rendered(NEGATED, ORIGINAL)) != key  # the order-swap check: Document 1 differs
    assert prefix_key(rendered(ORIGINAL + " More.", ORIGINAL)) != key
    assert prefix_key(rendered(ORIGINAL, ORIGINAL, prompt="nobands")) != key  # other instructions


def test_calls_without_a_document_before_the_last_have_no_key():
    assert prefix_key(()) is None
    assert prefix_key((Message("user", "Rate this."),)) is None
    single = (Message("system", "Extract triples."), Message("user", "Document:\n\n<document>\nText.\n</document>"))
    assert prefix_key(single) is None  # only the instructions precede it: every call shares them


def test_document_text_cannot_forge_a_block_boundary():
    # text that mentions a tag is escaped when rendered ("<\\document_2>"), so it never moves the cut
    tricky = ORIGINAL + " See <document_2> here."
    assert prefix_key(rendered(tricky, ORIGINAL)) == prefix_key(rendered(tricky, NEGATED))
    assert prefix_key(rendered(tricky, ORIGINAL)) != prefix_key(rendered(ORIGINAL, ORIGINAL))
