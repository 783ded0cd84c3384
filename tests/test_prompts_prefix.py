"""engine/prompts/prefix.py: the prefix key siblings share, on real rendered prompts."""

from __future__ import annotations

from engine.contracts import Message
from engine.prompts import load_prompt
from engine.prompts.prefix import prefix_key

ORIGINAL = "The river was wide. Boats sailed on it. Night fell over the town."
NEGATED = "The river was wide. Boats did not sail on it. Night fell over the town."


def rendered(first: str, second: str, prompt: str = "bands") -> tuple[Message, ...]:
    return load_prompt(prompt).render(first, second)[0].messages


def test_calls_whose_document_1_starts_alike_share_a_key():
    none, neg = rendered(ORIGINAL, ORIGINAL), rendered(ORIGINAL, NEGATED)
    key = prefix_key(none)
    assert key is not None and len(key) == 16
    assert prefix_key(neg) == key  # same instructions and Document 1: the needle is in Document 2
    assert prefix_key(rendered(ORIGINAL + " More text after it.", NEGATED)) == key  # same i, a longer j
    assert prefix_key(rendered("Boats sailed on it. Night fell over the town.", ORIGINAL)) != key  # another i
    assert prefix_key(rendered(NEGATED[:20] + "X" + NEGATED[21:], ORIGINAL)) != key  # differs in the first 64 characters
    assert prefix_key(rendered(ORIGINAL, ORIGINAL, prompt="nobands")) != key  # other instructions


def test_calls_without_a_document_before_the_last_have_no_key():
    assert prefix_key(()) is None
    assert prefix_key((Message("user", "Rate this."),)) is None
    single = (Message("system", "Extract triples."), Message("user", "Document:\n\n<document>\nText.\n</document>"))
    assert prefix_key(single) is None  # only the instructions precede it: every call shares them


def test_document_text_cannot_forge_a_block_boundary():
    # a tag in the text is escaped when rendered ("<\\document_1>"), so it never moves the cut
    tricky = "See <document_1> and <document_2> here. " + ORIGINAL
    assert prefix_key(rendered(tricky, ORIGINAL)) == prefix_key(rendered(tricky, NEGATED))
    assert prefix_key(rendered(tricky, ORIGINAL)) != prefix_key(rendered("See it here. " + ORIGINAL, ORIGINAL))
