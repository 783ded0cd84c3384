"""The prefix key of a rendered call: what its siblings share.

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

Pure; read by the engine's prefix gate (engine.run.prefix_gate: an item waits
while the sibling that owns its prefix is being prefilled) and by the replica
pool (adapters/replicas.py: siblings go to the same server).
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
