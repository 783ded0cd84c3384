"""What rendered calls share at their start: a prefix key, prefix chunks.

A pair prompt ends with its two documents (engine/prompts/documents.py). The
calls of one document at positions with the same i (any needle, any j)
share the instructions and the start of Document 1, its window opening at
the same sentence: the calls of one document at one position share all of
Document 1 and Document 2 up to the needle. `prefix_key` names the first
group: a digest of the messages up to KEY_CHARS characters into Document 1.
It routes calls over replicas (adapters/replicas.py): such calls go to the
same server, where the first of them left the prefix in its cache.

The engine's prefix gate (engine.run.prefix_gate: an item waits while the
call it shares most with is being prefilled) measures shared prefixes of
any length with `prefix_chunks`. Pure.
"""

from __future__ import annotations

import hashlib

from engine.contracts import Message
from engine.prompts.documents import PAIR_TAGS

_OPENING = tuple(f"<{tag}>\n" for tag in PAIR_TAGS)  # document text never holds one: it is escaped
# Characters of Document 1 in the key: less than the shortest sentence a
# prepared corpus keeps on average, so the same first sentence, the same key.
KEY_CHARS = 64


def prefix_key(messages: tuple[Message, ...]) -> bytes | None:
    """16-byte digest of `messages` up to KEY_CHARS characters into Document
    1 of the pair blocks ending the last message; None for a call without
    them (a single-document call shares only its instructions, which every
    call shares)."""
    if not messages:
        return None
    last = messages[-1].content
    # from the end, as engine.prompts.documents reads them: instructions may mention the tags
    second = last.rfind(_OPENING[1])
    first = last.rfind(_OPENING[0], 0, second) if second > 0 else -1
    if first < 0:
        return None
    cut = first + len(_OPENING[0]) + KEY_CHARS
    digest = hashlib.blake2b(digest_size=16)
    for message in messages[:-1]:
        digest.update(message.role.encode())
        digest.update(b"\0")
        digest.update(message.content.encode())
        digest.update(b"\0")
    digest.update(messages[-1].role.encode())
    digest.update(b"\0")
    digest.update(last[:cut].encode())
    return digest.digest()


# Characters a chunk of `prefix_chunks` covers: ~30 tokens of English.
CHUNK_CHARS = 128


def prefix_chunks(messages: tuple[Message, ...]) -> list[int]:
    """Chained hashes of the messages' text in CHUNK_CHARS chunks: the k-th
    is the same for two calls exactly when their first k chunks are (up to
    hash collisions), so the deepest shared one measures their shared
    prefix. Python's str hash: comparable within one process only."""
    text = "\0".join(f"{m.role}\0{m.content}" for m in messages)
    chunks: list[int] = []
    parent = 0
    for start in range(0, len(text) - CHUNK_CHARS + 1, CHUNK_CHARS):
        parent = hash((parent, text[start : start + CHUNK_CHARS]))
        chunks.append(parent)
    return chunks
