"""`needlejudge quickstart`'s run summary: each count says what it counts."""

from __future__ import annotations

from types import SimpleNamespace

from engine.commands.quickstart import calls_sentence


def _summary(**kw):
    base = dict(cells=2430, cells_reused=0, rows=29136, items_judged=29136, calls_network=29008, calls_cached=128)
    return SimpleNamespace(**{**base, **kw})


def test_a_finished_rerun_says_it_reused_every_result_not_zero_cache_answers():
    text = calls_sentence(_summary(cells_reused=2430, items_judged=0, calls_network=0, calls_cached=0))
    assert "all 29,136 results were reused" in text and "0 calls made, none needed" in text
    assert "0 answered by the cache" not in text


def test_a_first_run_labels_calls_made_and_calls_answered_without_a_call():
    text = calls_sentence(_summary())
    assert text.startswith("29,136 calls: 29,008 made, 128 answered without a new call")
    assert "identical requests shared within this run" in text  # in-run duplicates are named, not called cache answers
