"""engine.panels: a panel's settings, their errors (each naming its key), and the aggregation rules."""

from __future__ import annotations

import pytest

from engine.config import parse_config
from engine.contracts import ConfigError
from engine.panels import aggregate
from experiments import config_error

HEAD = 'store = "s"\noutput = "o"\n'
MEMBERS = """
[[judges]]
name = "jaccard"
adapter = "baseline"
model = "jaccard"
[[judges]]
name = "tfidf"
adapter = "baseline"
model = "tfidf"
[[judges]]
name = "gpt"
adapter = "openai"
model = "gpt-4o-mini"
prompts = ["bands", "likert"]
"""


def config_with(panel: str):  # type: ignore[no-untyped-def]
    return parse_config(HEAD + MEMBERS + '[[judges]]\nname = "panel"\n' + panel, source="exp.toml")


def test_a_panel_is_a_judge_of_the_config() -> None:
    config = config_with('panel = { members = ["jaccard", "tfidf", "gpt"], rule = "median" }')
    panel = config.judges[-1]
    assert panel.adapter == "panel" and panel.model == "panel(jaccard+tfidf+gpt)"
    assert panel.panel is not None and panel.panel.rule == "median" and panel.panel.needed() == 3
    assert config.judge_prompts(panel) == ("bands",)


@pytest.mark.parametrize(
    ("panel", "message"),
    [
        ('panel = { members = ["jaccard"] }', "`judges[3]` ('panel'): `panel.members`: a panel needs 2 to 5 member judges, got 1"),
        ('panel = { members = ["jaccard", "claude"] }', "`panel.members`: unknown judge 'claude'; expected one of the config's judges: 'jaccard', 'tfidf', 'gpt'"),
        ('panel = { members = ["jaccard", "jaccard"] }', "`panel.members`: duplicate members"),
        ('panel = { members = ["jaccard", "panel"] }', "a panel cannot be its own member"),
        ('panel = { members = ["jaccard", "tfidf"], rule = "trimmed_mean" }', "`panel.rule`: trimmed_mean needs at least 3 members"),
        ('panel = { members = ["jaccard", "tfidf"], rule = "mode" }', "`judges[3].panel.rule`: Invalid enum value 'mode'; expected one of 'majority', 'mean', 'median', 'trimmed_mean'"),
        ('panel = { members = ["jaccard", "tfidf"], quorum = 2 }', '`panel.quorum` applies only with missing = "drop"'),
        ('panel = { members = ["jaccard", "tfidf"], missing = "drop", quorum = 3 }', "`panel.quorum`: expected 1 to 2"),
        ('adapter = "openai"\nmodel = "x"\npanel = { members = ["jaccard", "tfidf"] }', "a panel has no `adapter`"),
        ('mode = "batch"\npanel = { members = ["jaccard", "tfidf"] }', 'a panel runs its members\' calls synchronously: `mode` must be "sync"'),
        ('panel = { members = ["jaccard", "tfidf"], cascade = { boundaries = [150] } }', "`panel.cascade.boundaries`: 150.0 is outside 0-100"),
        ('panel = { members = ["jaccard", "tfidf"], cascade = { boundaries = [50], escalate_needles = ["swap"] } }',
         "`panel.cascade.escalate_needles`: 'swap'; expected any of 'none', 'neg', 'con', 'ner'"),
    ],
)
def test_bad_panels_are_config_errors_naming_the_key(panel: str, message: str) -> None:
    assert message in config_error(HEAD + MEMBERS + '[[judges]]\nname = "panel"\n' + panel)


def test_a_batch_judge_cannot_be_a_member() -> None:
    text = HEAD + MEMBERS.replace('model = "gpt-4o-mini"', 'model = "gpt-4o-mini"\nmode = "batch"') + '[[judges]]\nname = "p"\npanel = { members = ["jaccard", "gpt"] }\n'
    with pytest.raises(ConfigError, match=r"`judges\[3\]` \('p'\): `panel.members`: 'gpt' has mode = \"batch\""):
        parse_config(text, source="exp.toml")


def test_a_panel_cannot_be_a_member() -> None:
    text = HEAD + MEMBERS + '[[judges]]\nname = "p1"\npanel = { members = ["jaccard", "tfidf"] }\n[[judges]]\nname = "p2"\npanel = { members = ["p1", "gpt"] }\n'
    with pytest.raises(ConfigError, match=r"`judges\[4\]` \('p2'\): `panel.members`: 'p1' is a panel; members must be single judges"):
        parse_config(text, source="exp.toml")


def test_aggregation_rules() -> None:
    assert aggregate("mean", [10.0, 20.0, 60.0]) == 30.0
    assert aggregate("median", [10.0, 20.0, 60.0, 100.0]) == 40.0
    assert aggregate("trimmed_mean", [0.0, 50.0, 60.0, 70.0, 100.0]) == 60.0  # drops 0 and 100
    assert aggregate("trimmed_mean", [10.0, 90.0]) == 50.0  # two answered (a dropped member): nothing to trim
    assert aggregate("majority", [3.0, 5.0, 5.0]) == 5.0
    assert aggregate("majority", [3.0, 5.0]) == 3.0  # a tie goes to the lowest mode
    with pytest.raises(ValueError):
        aggregate("mean", [])


# ---------------------------------------------------------------------------
# The panel's verdict from its members' verdicts

from engine.contracts import Verdict  # noqa: E402
from engine.run.panel import PanelMember, panel_outcome  # noqa: E402
from engine.panels import PanelSpec  # noqa: E402

MEMBERS3 = tuple(PanelMember(name, "bands") for name in ("a", "b", "c"))


def ok(score: float, raw: float | None = None, scale: str = "0-100") -> Verdict:
    return Verdict(status="ok", score=score, raw_score=raw if raw is not None else score, scale=scale)


def test_outcome_aggregates_the_members_that_answered() -> None:
    out = panel_outcome(PanelSpec(members=("a", "b", "c"), rule="median"), MEMBERS3, [ok(10), ok(80), ok(30)])
    assert out.verdict.status == "ok" and out.verdict.score == 30 and out.answered == ("a", "b", "c") and out.scores == (10, 80, 30)


def test_a_failed_member_fails_the_item_or_is_dropped_down_to_the_quorum() -> None:
    refused = Verdict(status="refused", detail="content_filter: no")
    strict = panel_outcome(PanelSpec(members=("a", "b", "c")), MEMBERS3, [ok(10), refused, ok(30)])
    assert strict.verdict.status == "refused" and strict.verdict.detail == "member b: content_filter: no" and strict.answered == ()
    drop = PanelSpec(members=("a", "b", "c"), missing="drop", quorum=2)
    kept = panel_outcome(drop, MEMBERS3, [ok(10), refused, ok(30)])
    assert kept.verdict.score == 20 and kept.answered == ("a", "c")
    short = panel_outcome(drop, MEMBERS3, [ok(10), refused, Verdict(status="unparseable", detail="no number")])
    assert short.verdict.status == "error" and short.verdict.score is None
    assert short.verdict.detail.startswith("quorum: 1 of 3 members answered (2 needed); member b: refused")


def test_majority_takes_the_members_raw_answers_on_their_scale() -> None:
    spec = PanelSpec(members=("a", "b", "c"), rule="majority")
    out = panel_outcome(spec, MEMBERS3, [ok(50, 4, "1-7"), ok(100, 7, "1-7"), ok(50, 4, "1-7")])
    assert out.verdict.raw_score == 4 and out.verdict.score == 50 and out.verdict.scale == "1-7"
