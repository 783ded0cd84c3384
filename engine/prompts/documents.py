"""The document delimiters: a contract between our prompts and whoever reads
a rendered call back (baseline judges, the fake server's simulated judge).

Documents go last in the final user message, each in a tagged block on its
own lines:

    <document_1>
    ...text...
    </document_1>

    <document_2>
    ...text...
    </document_2>

(`<document>` … `</document>` for a single-document call such as a triple
extraction.) Document text can never close or open a block: every
`<document…` or `</document…` in it (any case) gets one backslash after the
`<`/`</` (`</\\document_2>`), and a sequence that already had k backslashes
gets k+1, so the escaping is reversible and extraction returns the exact
original text. The same holds for `<original…` (the pairwise prompts' blocks
of originals). Extraction reads the blocks from the end of the message, so
instructions before them may mention the tags freely.
"""

from __future__ import annotations

import re

from engine.contracts import Message

DELIMITER_FORMAT = "tagged-blocks-v1"  # part of every prompt version
PAIR_TAGS = ("document_1", "document_2")
SINGLE_TAG = "document"
ORIGINAL_TAG = "original"  # a pairwise comparison: the original, then the two edits as document_1 and document_2
# a comparison of two pairs: original_1, document_1, original_2, document_2 (each edit after its own original)
PAIRS_ORIGINAL_TAGS = ("original_1", "original_2")

_ESCAPE = re.compile(r"<(/?)(\\*)(document|original)", re.IGNORECASE)
_UNESCAPE = re.compile(r"<(/?)\\(\\*)(document|original)", re.IGNORECASE)


class DocumentsNotFound(ValueError):
    """The messages do not end with our delimited document blocks."""


def escape_document(text: str) -> str:
    if "<" not in text:
        return text
    return _ESCAPE.sub(r"<\1\\\2\3", text)


def unescape_document(text: str) -> str:
    if "<" not in text:
        return text
    return _UNESCAPE.sub(r"<\1\2\3", text)


def document_block(tag: str, text: str) -> str:
    return f"<{tag}>\n{escape_document(text)}\n</{tag}>"


def pair_blocks(document_1: str, document_2: str) -> str:
    return document_block(PAIR_TAGS[0], document_1) + "\n\n" + document_block(PAIR_TAGS[1], document_2)


def extract_documents(messages: tuple[Message, ...]) -> tuple[str, str]:
    """The two documents of a rendered pair call, exactly as they were given."""
    content = _last_user_content(messages)
    head, second = _take_last_block(content, PAIR_TAGS[1])
    if not head.endswith("\n\n"):
        raise DocumentsNotFound(f"no <{PAIR_TAGS[0]}> block right before <{PAIR_TAGS[1]}>")
    _, first = _take_last_block(head[:-2], PAIR_TAGS[0])
    return first, second


def extract_comparison(messages: tuple[Message, ...]) -> tuple[str, str, str]:
    """The original and the two edits of a rendered pairwise call."""
    content = _last_user_content(messages)
    head, second = _take_last_block(content, PAIR_TAGS[1])
    head, first = _take_last_block(head[:-2], PAIR_TAGS[0])
    if not head.endswith("\n\n"):
        raise DocumentsNotFound(f"no <{ORIGINAL_TAG}> block before <{PAIR_TAGS[0]}>")
    _, original = _take_last_block(head[:-2], ORIGINAL_TAG)
    return original, first, second


def extract_pairs_comparison(messages: tuple[Message, ...]) -> tuple[str, str, str, str]:
    """(original 1, document 1, original 2, document 2) of a rendered comparison of two pairs."""
    content = _last_user_content(messages)
    blocks = []
    for tag in (PAIR_TAGS[1], PAIRS_ORIGINAL_TAGS[1], PAIR_TAGS[0], PAIRS_ORIGINAL_TAGS[0]):
        content, text = _take_last_block(content, tag)
        blocks.append(text)
        if tag != PAIRS_ORIGINAL_TAGS[0]:
            if not content.endswith("\n\n"):
                raise DocumentsNotFound(f"no block right before <{tag}>")
            content = content[:-2]
    second, original_2, first, original_1 = blocks
    return original_1, first, original_2, second


def extract_document(messages: tuple[Message, ...]) -> str:
    """The document of a rendered single-document call (a triple extraction)."""
    _, text = _take_last_block(_last_user_content(messages), SINGLE_TAG)
    return text


def _last_user_content(messages: tuple[Message, ...]) -> str:
    for message in reversed(messages):
        if message.role == "user":
            return message.content
    raise DocumentsNotFound("no user message")


def _take_last_block(content: str, tag: str) -> tuple[str, str]:
    """Split `content` ending with a `tag` block into (what precedes it, its text)."""
    opening, closing = f"<{tag}>\n", f"\n</{tag}>"
    if not content.endswith(closing):
        raise DocumentsNotFound(f"the message does not end with </{tag}>")
    body_end = len(content) - len(closing)
    # Escaped document text holds no opening tag, so the last one is ours.
    start = content.rfind(opening, 0, body_end)
    if start < 0 or (start > 0 and content[start - 1] != "\n"):
        raise DocumentsNotFound(f"no <{tag}> line opening the final block")
    return content[:start], unescape_document(content[start + len(opening) : body_end])
