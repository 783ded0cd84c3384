"""Per-cell stopping rules: the `[stopping]` settings (one Struct per rule),
the rules that consume a cell's scores in document order, and the anytime-valid
confidence sequences behind the `ci` rule.
"""

from engine.exports import lazy_exports

__all__ = ['CiSpec', 'FixedSpec', 'PaperSpec', 'StoppingRule', 'StoppingSpec', 'hedged_capital_cs', 'make_rule_factory']
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "StoppingSpec": "spec",
        "PaperSpec": "spec",
        "FixedSpec": "spec",
        "CiSpec": "spec",
        "StoppingRule": "rules",
        "make_rule_factory": "rules",
        "hedged_capital_cs": "confseq",
    },
)
