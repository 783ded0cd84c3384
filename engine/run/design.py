"""The experimental design: cells, their document orders, and the calls for one item.

A cell is (judge, prompt, needle, hay, i, j, replicate) plus, for the
instrument-check cells the design adds itself, a Document 1/2 order ("21")
or a control kind ("null_edit", "negative"). The cell list is small (it is
enumerated once); the work — one item per (cell, document) — is never
materialised: `Design.item(cell, doc_index)` builds one item on demand.

All cells at a position (i, j) share one document order
(`pairs.document_order`), so every needle, hay, judge and prompt sees the
same documents in the same order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol

import msgspec

from engine.config import ExperimentConfig, JudgeConfig
from engine.contracts import CallRequest, ConfigError, Control, Decoding, Pair, Prices, Prompt, Verdict, request_key
from engine.run.document_set import document_set
from engine.run.panel import PanelDesign, route_of, route_of_judge
from engine.registry import capabilities
from engine.stopping.rules import StoppingRule, make_rule_factory
from engine.stopping.spec import FixedSpec, StoppingSpec
from engine.tournament import comparison_graph, parse_position

CHECK_CONTROLS = ("null_edit", "negative")


class PairSource(Protocol):
    """What the design needs of a corpus: engine.corpus.pairs.Corpus, or any
    in-memory corpus (the scheduler's tests use one, without spaCy)."""

    @property
    def doc_ids(self) -> Sequence[str]: ...

    def make_pair(self, doc_id: str, needle: str, hay: str, i: int, j: int, seed: int) -> Pair | None: ...

    def make_control(self, doc_id: str, kind: Literal["null_edit", "negative"], i: int, j: int, seed: int) -> Pair:
        """Raise ValueError when the document has no window at (i, j)."""
        ...

    def room(self, doc_id: str, needle: str, hay: str, seed: int, reach: int) -> tuple[int, int] | None:
        """engine.run.document_set.RoomSource.room"""
        ...


class Cell(msgspec.Struct, frozen=True, kw_only=True):
    cell_no: int  # position in the design's enumeration (stable for a given config)
    judge: str
    prompt: str  # prompt name as configured
    needle: str
    hay: str
    i: int
    j: int
    replicate: int = 0
    order: str = "12"  # "21": Document 1 and 2 swapped (order-swap check)
    control: Control = ""
    check_n: int = 0  # >0: an instrument-check cell of exactly this many documents

    @property
    def is_check(self) -> bool:
        return self.check_n > 0

    def label(self) -> str:
        extra = f" order={self.order}" if self.order != "12" else ""
        extra += f" control={self.control}" if self.control else ""
        extra += f" rep={self.replicate}" if self.replicate else ""
        return f"{self.judge}/{self.prompt}/{self.needle}/{self.hay}/({self.i},{self.j}){extra}"


class Item:
    """One (cell, document) unit of work: the pair and the calls it needs."""

    __slots__ = ("cell", "doc_index", "pair", "requests", "keys", "results", "cached", "missing", "failures", "spans", "skip")

    def __init__(
        self,
        cell: Cell,
        doc_index: int,
        pair: Pair,
        requests: tuple[CallRequest, ...],
        keys: tuple[bytes, ...],
        spans: tuple[tuple[int, int], ...] = (),
    ) -> None:
        self.cell = cell
        self.doc_index = doc_index
        self.pair = pair
        self.requests = requests
        self.keys = keys
        self.results: list[Any] = [None] * len(requests)
        # No call was made for it in this run: every answer came from the
        # cache or from an identical call made for another item (a twin).
        # The dispatcher / batch judge clear it when they send one of its calls.
        self.cached = True
        self.missing: list[int] = []
        self.failures = 0  # rounds of transient failures (the item stayed pending)
        self.spans = spans  # a panel item: each member's [start, stop) of the requests
        # a cascade panel's item: skip(n, results) says call n is not needed (engine.run.panel)
        self.skip: Callable[[int, list[Any]], bool] | None = None


def enumerate_cells(config: ExperimentConfig, entrants: Sequence[str] = ()) -> list[Cell]:
    """All cells, experimental first (judge-major), then the check cells.
    `entrants`: the documents of a tournament of documents (Design picks them)."""
    cells: list[Cell] = []
    positions = config.position_list()

    def add(**fields: Any) -> None:
        cells.append(Cell(cell_no=len(cells), **fields))

    judges = [judge for judge in config.judges if judge.alone]  # `alone = false`: only a panel's member
    for judge in judges:
        for prompt in config.judge_prompts(judge):
            for needle in config.needles:
                for hay in config.hays:
                    for i, j in positions:
                        for replicate in range(config.replicates):
                            add(judge=judge.name, prompt=prompt, needle=needle, hay=hay, i=i, j=j, replicate=replicate)
    tournament = config.tournament
    if tournament is not None:  # each comparison of two contestants in both orders, `documents` of each
        # one document order for every comparison: the position's (positions: the check position's)
        ti, tj = tournament.position or config.check_position()
        labels = tournament.labels(entrants)
        repeats = len(tournament.repetitions((ti, tj))) if tournament.kind == "documents" else tournament.documents
        for name in tournament.judges:
            for x, y in comparison_graph(tournament, config.seed):
                for order in ("12", "21"):
                    add(judge=name, prompt=tournament.prompt_name, needle=f"{labels[x]}|{labels[y]}", hay="orig", i=ti, j=tj,
                        order=order, control="tournament", check_n=repeats)  # fmt: skip
    checks = config.checks
    ci, cj = config.check_position()
    for judge in judges:
        for prompt in config.judge_prompts(judge):
            if checks.order_swap:
                for needle in config.needles:
                    for hay in config.hays:
                        add(judge=judge.name, prompt=prompt, needle=needle, hay=hay, i=ci, j=cj, order="21", check_n=checks.order_swap)
            for control in CHECK_CONTROLS:
                n = getattr(checks, control)
                if n:
                    add(judge=judge.name, prompt=prompt, needle="none", hay="orig", i=ci, j=cj, control=control, check_n=n)
    return cells


class Design:
    """Cells + corpus + prompts + judges: builds items and rules on demand."""

    def __init__(
        self,
        config: ExperimentConfig,
        corpus: PairSource,
        prompts: dict[str, Prompt],
        *,
        document_order: Callable[[Sequence[str], int, int, int], list[str]],
    ) -> None:
        self.config = config
        self.corpus = corpus
        self.prompts = prompts
        self.judges: dict[str, JudgeConfig] = {judge.name: judge for judge in config.judges}
        self._document_order = document_order
        if not corpus.doc_ids:
            raise ConfigError(f"{config.store}: the prepared corpus holds no documents")
        # the documents every cell draws from (config `cell_documents`)
        self._doc_ids, self.coverage = document_set(config, corpus)
        self._orders: dict[tuple[int, int], list[str]] = {}
        self._repetitions: dict[str, tuple[str, int, int]] = {}  # a tournament of documents: needle@i,j -> (needle, i, j)
        self.entrants = self._entrants()
        self.cells = enumerate_cells(config, self.entrants)
        self.n_experimental = sum(1 for cell in self.cells if not cell.is_check)
        self._rule_factory = make_rule_factory(config.stopping, max(1, self.n_experimental))
        self._check_factories: dict[int, Callable[[], StoppingRule]] = {}
        # per (judge, prompt, order, tag?) constants of the request
        self._guided_regex = {
            name: capabilities(judge.spec()).guided_decoding for name, judge in self.judges.items() if judge.panel is None
        }
        self.panels: dict[str, PanelDesign] = {
            judge.name: PanelDesign(judge, config, prompts) for judge in config.judges if judge.panel is not None
        }
        self._decodings: dict[tuple[str, Decoding], Decoding] = {}

    # -- documents -----------------------------------------------------------
    def _entrants(self) -> tuple[str, ...]:
        """A tournament of documents: the first `entrants` documents of its
        position's order that admit each of its needles at each of its positions."""
        tournament = self.config.tournament
        if tournament is None or tournament.kind != "documents":
            return ()
        i, j = tournament.position or self.config.check_position()
        order = self._document_order(self._doc_ids, self.config.seed, i, j)
        seed = self.config.seed
        self._repetitions = {f"{n}@{ni},{nj}": (n, ni, nj) for n, ni, nj in tournament.repetitions((i, j))}
        found: list[str] = []
        for doc_id in order:
            if all(self.corpus.make_pair(doc_id, n, "orig", ni, nj, seed) is not None for n, ni, nj in self._repetitions.values()):
                found.append(doc_id)
                if len(found) == tournament.entrants:
                    return tuple(found)
        raise ConfigError(
            f"{self.config.source or '<config>'}: `tournament.entrants`: {tournament.entrants} documents asked, but only {len(found)} of "
            f"the corpus admit each of {list(self._repetitions)} (needle@i,j); lower `entrants`, or change `needles` or `positions`"
        )

    def order(self, cell: Cell) -> list[str]:
        if cell.control == "tournament" and self.entrants:  # documents compete: each comparison once per needle@i,j
            return list(self._repetitions)
        key = (cell.i, cell.j)
        order = self._orders.get(key)
        if order is None:
            order = self._document_order(self._doc_ids, self.config.seed, cell.i, cell.j)
            self._orders[key] = order
        return order

    def doc_limit(self, cell: Cell) -> int:
        """How many documents the cell may try: its whole order (a refused or
        failed document is replaced by the next one, checks included)."""
        return len(self.order(cell))

    # -- rules ---------------------------------------------------------------
    def new_rule(self, cell: Cell) -> StoppingRule:
        if not cell.is_check:
            return self._rule_factory()
        factory = self._check_factories.get(cell.check_n)
        if factory is None:
            factory = make_rule_factory(FixedSpec(n=cell.check_n), 1)
            self._check_factories[cell.check_n] = factory
        return factory()

    def doc_cap(self, cell: Cell) -> int:
        """Upper bound on documents the cell consumes."""
        limit = self.doc_limit(cell)
        cap = cell.check_n if cell.is_check else self.config.stopping.doc_cap
        return limit if cap is None else min(limit, cap)

    def min_docs(self, cell: Cell) -> int:
        if cell.is_check:
            return cell.check_n
        return self.config.stopping.resolved_min_docs

    # -- items ---------------------------------------------------------------
    def pair(self, cell: Cell, doc_id: str) -> Pair | None:
        seed = self.config.seed
        if cell.control == "tournament":  # `perturbed` is contestant x's edit, `rival` contestant y's
            x, y = cell.needle.split("|")
            kind = self.config.tournament.kind  # type: ignore[union-attr]
            if kind == "needles":
                first = self.corpus.make_pair(doc_id, x, cell.hay, cell.i, cell.j, seed)
                second = self.corpus.make_pair(doc_id, y, cell.hay, cell.i, cell.j, seed)
            elif kind == "positions":
                needle = self.config.tournament.needle  # type: ignore[union-attr]
                first = self.corpus.make_pair(doc_id, needle, cell.hay, *parse_position(x), seed)
                second = self.corpus.make_pair(doc_id, needle, cell.hay, *parse_position(y), seed)
            else:  # documents x and y; `doc_id` names this repetition's needle@i,j
                needle, i, j = self._repetitions[doc_id]
                first = self.corpus.make_pair(x, needle, cell.hay, i, j, seed)
                second = self.corpus.make_pair(y, needle, cell.hay, i, j, seed)
            if first is None or second is None:
                return None
            rival_original = None if kind == "needles" else second.original
            return msgspec.structs.replace(first, rival=second.perturbed, rival_original=rival_original, control="tournament")
        if cell.control:
            try:
                return self.corpus.make_control(doc_id, cell.control, cell.i, cell.j, seed)
            except ValueError:  # the document has no window at (i, j): try the next one
                return None
        return self.corpus.make_pair(doc_id, cell.needle, cell.hay, cell.i, cell.j, seed)

    def requests(self, cell: Cell, pair: Pair) -> tuple[CallRequest, ...]:
        judge = self.judges[cell.judge]
        if judge.panel is not None:
            return self._panel_requests(cell, pair)[0]
        prompt = self.prompts[cell.prompt]
        if cell.control == "tournament":
            x, y = (pair.original, pair.perturbed), (pair.rival_original, pair.rival)
            (oa, a), (ob, b) = (x, y) if cell.order == "12" else (y, x)
            if pair.rival_original is None:  # one original, two edits of it
                rendered = prompt.render(a, b, original=pair.original)  # type: ignore[call-arg]  # a pairwise prompt
            else:  # two (original, edit) pairs
                rendered = prompt.render(a, b, original=oa, original_2=ob)  # type: ignore[call-arg]
        elif cell.order == "21":
            rendered = prompt.render(pair.perturbed, pair.original)
        else:
            rendered = prompt.render(pair.original, pair.perturbed)
        return tuple(
            CallRequest(
                namespace=call.namespace,
                adapter=judge.adapter,
                model=judge.model,
                revision=judge.revision,
                messages=call.messages,
                decoding=self._decoding(cell.judge, call.decoding),
                replicate=cell.replicate + call.replicate_offset,
            )
            for call in rendered
        )

    def _decoding(self, judge: str, decoding: Decoding) -> Decoding:
        """The prompt's decoding as this judge's backend can honour it (a
        guided regex only where it constrains decoding: Capabilities.guided_decoding)."""
        key = (judge, decoding)
        canonical = self._decodings.get(key)
        if canonical is None:
            keep = self._guided_regex[judge] or decoding.guided_regex is None
            canonical = decoding if keep else msgspec.structs.replace(decoding, guided_regex=None)
            self._decodings[key] = canonical
        return canonical

    def _panel_requests(self, cell: Cell, pair: Pair) -> tuple[tuple[CallRequest, ...], tuple[tuple[int, int], ...]]:
        """A panel item's calls: each member's, exactly as the member alone would make them."""
        requests: list[CallRequest] = []
        spans = []
        for member in self.panels[cell.judge].members(cell.prompt):
            start = len(requests)
            requests.extend(self.requests(msgspec.structs.replace(cell, judge=member.judge, prompt=member.prompt), pair))
            spans.append((start, len(requests)))
        return tuple(requests), tuple(spans)

    def item(self, cell: Cell, doc_index: int) -> Item | None:
        """The item for the cell's `doc_index`-th document, or None if the
        document admits no pair for this cell (the scheduler moves on)."""
        pair = self.pair(cell, self.order(cell)[doc_index])
        if pair is None:
            return None
        panel = self.panels.get(cell.judge)
        if panel is not None:
            requests, spans = self._panel_requests(cell, pair)
            item = Item(cell, doc_index, pair, requests, tuple(request_key(r) for r in requests), spans)
            item.skip = panel.cascade_skip(cell, doc_index, spans)
            return item
        requests = self.requests(cell, pair)
        return Item(cell, doc_index, pair, requests, tuple(request_key(r) for r in requests))

    def verdict(self, item: Item) -> tuple[Verdict, tuple[str, ...], tuple[float, ...]]:
        """The item's verdict, and for a panel item the members that answered and their scores."""
        cell = item.cell
        panel = self.panels.get(cell.judge)
        if panel is None:
            return self.prompts[cell.prompt].verdict(tuple(item.results)), (), ()
        outcome = panel.outcome(cell, item.doc_index, item.spans, item.results)
        return outcome.verdict, outcome.answered, outcome.scores

    def replayed(self, cell: Cell, doc_index: int, members: Sequence[str], member_scores: Sequence[float]) -> None:
        """A row of the cell restored from the store (engine.run.resume): a
        measured cascade records its first member's score, as when judged."""
        panel = self.panels.get(cell.judge)
        if panel is not None:
            panel.record(cell, doc_index, members, member_scores)

    def gate(self, cell: Cell) -> int:
        """A measured cascade's block size: the cell's documents of one block are
        issued only once every earlier one is consumed (engine.run.cell_policy)."""
        panel = self.panels.get(cell.judge)
        return panel.block if panel is not None else 0

    def request_prices(self, judge: str, request: CallRequest) -> Prices:
        """The prices of the judge that makes this request (a panel's member for a panel)."""
        panel = self.panels.get(judge)
        if panel is None:
            return self.judges[judge].prices
        return next(self.judges[m].prices for m in panel.spec.members if route_of(request) == route_of_judge(self.judges[m]))

    def row_prompt(self, cell: Cell) -> tuple[str, str]:
        """The (prompt id, version) a cell's rows carry."""
        panel = self.panels.get(cell.judge)
        if panel is not None:
            return panel.prompt_identity(cell.prompt)
        prompt = self.prompts[cell.prompt]
        return prompt.id, prompt.version
