"""Which documents the cells of an experiment draw from (config `cell_documents`).

A document serves a cell (needle, hay, i, j) when the window fits: its needle
sentence has `i` sentences before it and `j` after it in the hay (orig: the
document itself; rand: the donor's window). Room is separable, so a document
has room for every position of the design exactly when it has room for the
widest one, (max i, max j).

- "balanced" (the default): the cells draw only from the documents that have
  room for every needle and hay of the design at the widest position, so every
  cell sees the same documents and a difference between positions is not a
  difference between documents;
- "all": each cell draws from every document that fits it; the outer cells then
  hold fewer, and other, documents than the inner ones.

The item oracle can still refuse a single pair; that is counted where it
happens (engine.corpus.pairs.Corpus.oracle_failures), not here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import msgspec
import numpy as np

from engine.config import ExperimentConfig
from engine.contracts import ConfigError


class RoomSource(Protocol):
    @property
    def doc_ids(self) -> Sequence[str]: ...

    def room(self, doc_id: str, needle: str, hay: str, seed: int, reach: int) -> tuple[int, int] | None:
        """Sentences a window of this needle and hay can hold before and after
        the needle sentence (`reach`: the design's widest i or j, which picks
        the rand-hay window); None if the document has no such window."""
        ...


class DocumentCoverage(msgspec.Struct, frozen=True, kw_only=True):
    setting: str  # "balanced" or "all"
    prepared: int  # documents in the prepared corpus
    used: int  # documents the cells draw from
    widest: tuple[int, int]  # (max i, max j) of the design's positions
    serve_every_cell: int  # documents with room for every needle and hay at the widest position
    cell_min: int  # documents that fit the cell holding the fewest, under "all"
    cell_max: int  # ... and the most
    fewest_cell: str  # that cell, as "needle/hay/(i,j)"

    @property
    def left_out(self) -> int:
        return self.prepared - self.used

    def lines(self) -> list[str]:
        """What the dry run and the report say of it, one finding a line."""
        i, j = self.widest
        if self.setting == "balanced":
            return [
                f"documents: {self.used:,} of the {self.prepared:,} prepared serve every cell (cell_documents = \"balanced\": "
                f"each needle has room for ({i}, {j}) in each hay); {self.left_out:,} left out"
            ]
        return [
            f"documents: cell_documents = \"all\": each cell draws from the documents that fit it, {self.cell_min:,} "
            f"({self.fewest_cell}) to {self.cell_max:,} of the {self.prepared:,} prepared; {self.serve_every_cell:,} serve every cell",
            *([f"warning: cells draw from different documents ({self.cell_min:,} to {self.cell_max:,}), so a difference between "
               "positions is partly a difference between documents; cell_documents = \"balanced\" uses the "
               f"{self.serve_every_cell:,} that serve every cell"] if self.cell_min != self.cell_max else []),
        ]  # fmt: skip


def document_set(config: ExperimentConfig, corpus: RoomSource) -> tuple[list[str], DocumentCoverage]:
    """(the documents the cells draw from, in corpus order; what that leaves out).
    ConfigError when no document serves every cell under "balanced"."""
    doc_ids = list(corpus.doc_ids)
    positions = np.array(config.position_list(), dtype=np.int64)
    widest_i, widest_j = int(positions[:, 0].max()), int(positions[:, 1].max())
    reach = max(widest_i, widest_j)
    serves_all = np.ones(len(doc_ids), dtype=bool)
    fewest, most, fewest_cell = len(doc_ids), 0, ""
    for needle in config.needles:
        for hay in config.hays:
            rooms = [corpus.room(doc_id, needle, hay, config.seed, reach) for doc_id in doc_ids]
            before = np.array([-1 if r is None else r[0] for r in rooms], dtype=np.int64)
            after = np.array([-1 if r is None else r[1] for r in rooms], dtype=np.int64)
            serves_all &= (before >= widest_i) & (after >= widest_j)
            fits = ((before[None, :] >= positions[:, :1]) & (after[None, :] >= positions[:, 1:])).sum(axis=1)
            low = int(fits.argmin())
            if int(fits[low]) < fewest or not fewest_cell:
                fewest, fewest_cell = int(fits[low]), f"{needle}/{hay}/({positions[low, 0]},{positions[low, 1]})"
            most = max(most, int(fits.max()))
    balanced = [d for d, keep in zip(doc_ids, serves_all) if keep]
    coverage = DocumentCoverage(
        setting=config.cell_documents,
        prepared=len(doc_ids),
        used=len(balanced) if config.cell_documents == "balanced" else len(doc_ids),
        widest=(widest_i, widest_j),
        serve_every_cell=len(balanced),
        cell_min=fewest,
        cell_max=most,
        fewest_cell=fewest_cell,
    )
    if config.cell_documents == "balanced" and doc_ids and not balanced:
        raise ConfigError(
            f"{config.source or '<config>'}: `cell_documents` = \"balanced\": none of the {len(doc_ids):,} prepared documents has "
            f"room for every needle of {list(config.needles)} in every hay of {list(config.hays)} at ({widest_i}, {widest_j}) "
            f"(the cell that fits the fewest, {fewest_cell}, fits {fewest:,}); lower `k` or `positions`, "
            'or set cell_documents = "all"'
        )
    return (balanced if config.cell_documents == "balanced" else doc_ids), coverage
