"""What rendered calls share at their start: a prefix key, prefix chunks.

A pair prompt ends with its two documents (engine/prompts/documents.py), so
the items of one document at one position (needle none/neg/con/ner, any
judge-side replicate) share the instructions and Document 1 and differ only
from Document 2 on: the longest prefix a prefix cache (vLLM's automatic
prefix caching, a provider's prompt cache) can reuse between them. The key
is a digest of the messages up to the opening tag of the last document
block. Two calls with the same key share at least that prefix. A call with
fewer than two document blocks (a single-document triple extraction) gets
none: what precedes its document is the instructions alone, which every
call shares.

The key routes calls over replicas (adapters/replicas.py: siblings go to
the same server). The engine's prefix gate (engine.run.prefix_gate: an item
waits while the call it shares most with is being prefilled) measures
shared prefixes of any length with `prefix_chunks`, which also catches
calls that share part of Document 1 (one document at positions of the same
i). Pure.
"""

from __future__ import annotations

import hashlib

from engine.contracts import Message

_OPEN = "<document"  # opening tags only: a closing tag starts "</", escaped text "<\\"


def prefix_key(messages: tuple[Message, ...]) -> bytes | None:
    """16-byte digest of `messages` up to the opening tag of the last
    document block of the last message; None unless another document block
    precedes that one."""
    if not messages:
        return None
    last = messages[-1].content
    cut = last.rfind(_OPEN)
    if cut <= 0 or last.rfind(_OPEN, 0, cut) < 0:  # no document before the last one
        return None
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
