"""Cache keys are byte-identical across refactors of the render + key path.

A changed key silently loses every answer already paid for, so the keys of
a fixed set of items are pinned to the digest the code gave when they were
first recorded. The pairs are built by hand (an in-memory corpus), so the
pin covers the design's requests, the prompts' rendering and
`request_key`, not corpus preparation.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from engine.config import parse_config
from engine.contracts import Pair
from engine.run.design import Design

CONFIG = """
store = "s"
output = "o"
seed = 3
needles = ["none", "neg", "con"]
hays = ["orig", "rand"]
positions = [[0, 0], [2, 1]]
replicates = 2
prompts = ["bands", "nobands", "sts", "triples"]
[checks]
order_swap = 2
[[judges]]
name = "api"
adapter = "openai"
model = "gpt-4o-mini-2024-07-18"
[[judges]]
name = "local"
adapter = "openai-compatible"
model = "google/gemma-3-4b-it"
base_url = "http://127.0.0.1:9/v1"
[[judges]]
name = "baseline"
adapter = "baseline"
model = "jaccard"
"""
# recorded on main at 798cb59 (before the fast paths of the item path)
PINNED_DIGEST = "ec6758f6d0aa1113ada0b86c9b3f579bcc7cbfe21adeeab866cc4a20b280ad39"


class HandCorpus:
    """Three documents whose pairs are written out: no spaCy, no store."""

    doc_ids = ("doc-a", "doc-b", "doc-c")

    def make_pair(self, doc_id: str, needle: str, hay: str, i: int, j: int, seed: int) -> Pair:
        before = " ".join(f"Sentence {k} of {doc_id} ({hay}) comes before the needle." for k in range(i))
        after = " ".join(f"Sentence {k} of {doc_id} ({hay}) comes after it." for k in range(j))
        needle_before = f"The committee in {doc_id} approved the plan and the budget."
        needle_after = {
            "none": needle_before,
            "neg": needle_before.replace("approved", "did not approve"),
            "con": needle_before.replace(" and ", " or "),
        }[needle]
        original = " ".join(part for part in (before, needle_before, after) if part)
        perturbed = " ".join(part for part in (before, needle_after, after) if part)
        return Pair(
            doc_id=doc_id, needle=needle, hay=hay, i=i, j=j, original=original, perturbed=perturbed,  # type: ignore[arg-type]
            needle_before=needle_before, needle_after=needle_after, seed=seed,
            hay_doc_id="doc-c" if hay == "rand" else None,
        )

    def make_control(self, doc_id: str, control: str, i: int, j: int, seed: int) -> Pair:
        raise ValueError("no controls in this design")

    def room(self, doc_id: str, needle: str, hay: str, seed: int, reach: int) -> tuple[int, int]:
        return reach, reach  # make_pair writes out any i and j: every document serves every cell


def keys_digest() -> tuple[str, int]:
    from engine.corpus.pairs import document_order
    from engine.prompts import load_prompt

    config = parse_config(CONFIG, base_dir=Path("/tmp"))
    prompts = {name: load_prompt(name) for name in ("bands", "nobands", "sts", "triples", "pair")}
    design = Design(config, HandCorpus(), prompts, document_order=document_order)
    digest = hashlib.blake2b(digest_size=32)
    count = 0
    for cell in design.cells:
        for doc_index in range(design.doc_limit(cell)):
            item = design.item(cell, doc_index)
            assert item is not None
            for key in item.keys:
                digest.update(key)
                count += 1
    return digest.hexdigest(), count


def test_request_keys_are_byte_identical_to_the_recorded_ones() -> None:
    digest, count = keys_digest()
    assert count == 990  # every call of every cell (triples: 2 calls an item), 3 documents each
    assert digest == PINNED_DIGEST
