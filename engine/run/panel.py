"""A panel judge in a run (docs/panels.md): its adapter routes each member
request to that member's own adapter, and its verdict aggregates the
members' verdicts by the panel's rule (engine.panels).

The calls of a panel item are its members' calls, built as when each
member runs alone (engine.run.design), so the call cache and the
dispatcher's in-flight sharing answer them exactly as for the member.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from engine.config import ExperimentConfig, JudgeConfig
from engine.contracts import Adapter, CallRequest, CallResult, Capabilities, Prompt, Verdict
from engine.panels import PanelSpec, aggregate, block_flag, check_rule_fits, escalates, near_boundary
from engine.prompts.scales import parse_scale

Route = tuple[str, str, str]  # (adapter, model, revision) of a request


def route_of(request: CallRequest) -> Route:
    return (request.adapter, request.model, request.revision)


def route_of_judge(judge: JudgeConfig) -> Route:
    return (judge.adapter, judge.model, judge.revision)


class PanelAdapter:
    """Sends each call of a panel item to its member's adapter (the same
    object the member judge uses: one rate limiter, one connection pool).
    It owns nothing: the runner closes the members' adapters."""

    capabilities = Capabilities()

    def __init__(self, routes: dict[Route, Adapter]) -> None:
        self._routes = routes

    async def complete(self, request: CallRequest) -> CallResult:
        return await self._routes[route_of(request)].complete(request)

    async def aclose(self) -> None:
        return None


class PanelMember(msgspec.Struct, frozen=True):
    judge: str
    prompt: str  # the prompt name the member answers the panel's items with


class PanelOutcome(msgspec.Struct, frozen=True):
    verdict: Verdict
    answered: tuple[str, ...]  # members whose answer the panel used
    scores: tuple[float, ...]  # their 0-100 scores, in member order


def member_verdicts(prompts: Sequence[Prompt], spans: Sequence[tuple[int, int]], results: Sequence[CallResult | None]) -> list[Verdict | None]:
    """Each member's verdict from its slice of the item's results; None for a
    member not asked (a cascade stopped before it)."""
    out: list[Verdict | None] = []
    for prompt, (start, stop) in zip(prompts, spans):
        part = results[start:stop]
        out.append(None if any(r is None for r in part) else prompt.verdict(tuple(part)))  # type: ignore[arg-type]
    return out


def panel_outcome(panel: PanelSpec, members: Sequence[PanelMember], verdicts: Sequence[Verdict | None]) -> PanelOutcome:
    answered = [(m.judge, v) for m, v in zip(members, verdicts) if v is not None and v.status == "ok" and v.score is not None]
    failed = [(m.judge, v) for m, v in zip(members, verdicts) if v is not None and not (v.status == "ok" and v.score is not None)]
    asked = len(answered) + len(failed)
    if failed and panel.missing == "fail":
        name, v = failed[0]
        return PanelOutcome(Verdict(status=v.status if v.status != "ok" else "unparseable", scale=v.scale, detail=f"member {name}: {v.detail}"), (), ())
    needed = min(panel.needed(), asked)  # a cascade that stopped early asked fewer
    if not answered or len(answered) < needed:
        why = "; ".join(f"member {name}: {v.status} {v.detail}".rstrip() for name, v in failed)
        detail = f"quorum: {len(answered)} of {len(members)} members answered ({panel.needed()} needed); {why}"
        return PanelOutcome(Verdict(status="error", detail=detail), (), ())
    scores = tuple(float(v.score) for _, v in answered)  # type: ignore[arg-type]
    if panel.rule == "majority":
        scale = answered[0][1].scale
        raw = aggregate("majority", [float(v.raw_score) for _, v in answered])  # type: ignore[arg-type]
        verdict = Verdict(status="ok", score=parse_scale(scale).rescale(raw), raw_score=raw, scale=scale)
    else:
        verdict = Verdict(status="ok", score=aggregate(panel.rule, scores), scale="0-100")
    return PanelOutcome(verdict, tuple(name for name, _ in answered), scores)


def settles(panel: PanelSpec, first: Verdict | None) -> bool:
    """A cascade's first member settles the item: it answered, away from every boundary."""
    if panel.cascade is None or first is None:
        return False
    return first.status == "ok" and first.score is not None and not near_boundary(panel.cascade, first.score)


def member_prompt(config: ExperimentConfig, member: str, prompt: str) -> str:
    """The prompt a member answers a panel's `prompt` items with: that one when
    the member has it, else the member's first (a baseline keeps `pair`)."""
    judge = next(j for j in config.judges if j.name == member)
    own = config.judge_prompts(judge)
    return prompt if prompt in own else own[0]


class PanelDesign:
    """One panel judge of a design: its members per panel prompt, its rows'
    prompt identity, and its verdict from the members' results."""

    def __init__(self, judge: JudgeConfig, config: ExperimentConfig, prompts: Mapping[str, Prompt]) -> None:
        assert judge.panel is not None
        self.name = judge.name
        self.spec = judge.panel
        self._prompts = prompts
        self._members = {
            p: tuple(PanelMember(m, member_prompt(config, m, p)) for m in judge.panel.members) for p in config.judge_prompts(judge)
        }
        self._identity = {p: ("panel", self._version(members)) for p, members in self._members.items()}
        # a measured cascade: per cell, the first member's score per document index (None: it gave
        # none), recorded as items are judged or rows replayed; and each (cell, block)'s flag
        self._first_scores: dict[int, dict[int, float | None]] = {}
        self._flags: dict[tuple[int, int], bool] = {}

    @property
    def block(self) -> int:
        """Documents per decision block of a measured cascade (0: none)."""
        cascade = self.spec.cascade
        return cascade.block if cascade is not None and cascade.max_ci_width is not None else 0

    def record(self, cell: Any, doc_index: int, answered: Sequence[str], scores: Sequence[float]) -> None:
        """The first member's score in an item's outcome (what its row says)."""
        if self.block:
            first = self.spec.members[0]
            self._first_scores.setdefault(cell.cell_no, {})[doc_index] = scores[0] if answered and answered[0] == first else None

    def flagged(self, cell: Any, doc_index: int) -> bool:
        """The first member is unreliable for this item's cell (declared), or
        for its block (measured: engine.panels.block_flag)."""
        cascade = self.spec.cascade
        assert cascade is not None
        if escalates(cascade, cell.needle, cell.control):
            return True
        if not self.block:
            return False
        key = (cell.cell_no, doc_index // self.block)
        flag = self._flags.get(key)
        if flag is None:  # decided once per block, when its first item is built: every earlier document is judged by then
            flag = self._flags[key] = block_flag(cascade, self._first_scores.get(cell.cell_no, {}), doc_index)[0]
        return flag

    def _version(self, members: Sequence[PanelMember]) -> str:
        parts = [msgspec.json.encode(self.spec).decode()]
        parts += [f"{m.judge}:{self._prompts[m.prompt].id}@{self._prompts[m.prompt].version}" for m in members]
        return hashlib.blake2b("\x1f".join(parts).encode(), digest_size=6).hexdigest()

    def members(self, prompt: str) -> tuple[PanelMember, ...]:
        return self._members[prompt]

    def prompt_identity(self, prompt: str) -> tuple[str, str]:
        return self._identity[prompt]

    def outcome(self, cell: Any, doc_index: int, spans: Sequence[tuple[int, int]], results: Sequence[CallResult | None]) -> PanelOutcome:
        members = self._members[cell.prompt]
        verdicts = member_verdicts([self._prompts[m.prompt] for m in members], spans, results)
        if self.spec.cascade is not None and not self.flagged(cell, doc_index) and settles(self.spec, verdicts[0]):
            outcome = panel_outcome(self.spec, members[:1], verdicts[:1])  # the same whether or not the others' answers are cached
        else:
            outcome = panel_outcome(self.spec, members, verdicts)
        self.record(cell, doc_index, outcome.answered, outcome.scores)
        return outcome

    def cascade_skip(self, cell: Any, doc_index: int, spans: Sequence[tuple[int, int]]) -> Callable[[int, list[Any]], bool] | None:
        """For a cascade: whether call n is not needed, given the results so far
        (the first member's calls come first and are always made)."""
        if self.spec.cascade is None or self.flagged(cell, doc_index):
            return None
        prompt = cell.prompt
        first_prompt = self._prompts[self._members[prompt][0].prompt]
        start, stop = spans[0]

        def skip(n: int, results: list[Any]) -> bool:
            if n < stop:
                return False
            first = results[start:stop]
            # a first member still unanswered (a transient failure) settles nothing: ask the others
            return None not in first and settles(self.spec, first_prompt.verdict(tuple(first)))

        return skip

    def manifest(self) -> dict[str, Any]:
        """For the analysis: the raters (judge, prompt id, version) the panel asked, and its settings."""
        raters = []
        for members in self._members.values():
            for m in members:
                rater = [m.judge, self._prompts[m.prompt].id, self._prompts[m.prompt].version]
                if rater not in raters:
                    raters.append(rater)
        return {"raters": raters, **msgspec.to_builtins(self.spec)}


def check_panels(config: ExperimentConfig, prompts: Mapping[str, Prompt]) -> None:
    """Every panel's rule fits its members' scales (ConfigError naming the key)."""
    for n, judge in enumerate(config.judges):
        if judge.panel is None:
            continue
        at = f"{config.source or '<config>'}: `judges[{n}]` ({judge.name!r})"
        for p in config.judge_prompts(judge):
            scales = []
            for m in judge.panel.members:
                prompt = prompts[member_prompt(config, m, p)]
                scale = parse_scale(prompt.scale)
                scales.append((m, prompt.scale, scale.integer, scale.high - scale.low + 1))
            check_rule_fits(judge.panel, scales, at)


def panel_adapter(design: Any, panel: str, adapters: Mapping[str, Adapter]) -> PanelAdapter:
    """The panel's adapter over its members' (already created) adapters."""
    routes: dict[Route, Adapter] = {}
    for member in design.judges[panel].panel.members:
        routes.setdefault(route_of_judge(design.judges[member]), adapters[member])
    return PanelAdapter(routes)
