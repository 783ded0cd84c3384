"""benchmarks/set_aside_part.py: which ids count as seen before a held-out part is set aside."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from set_aside_part import LISTING_SIZE, shown_ids, stratum_shares  # noqa: E402

NEWS = re.compile(r"\bnews-\d+\b")


def test_every_id_named_in_a_read_folder_counts_as_seen(tmp_path):
    (tmp_path / "labels.jsonl").write_text('{"doc_id": "news-3"}\n{"doc_id": "news-40"}\n')
    (tmp_path / "stdout").write_text("news-7 kept\n")  # saved command output, no suffix
    (tmp_path / "model.bin").write_text("news-9")  # not a text file
    assert shown_ids([tmp_path], [], NEWS, {"news-3", "news-40", "news-7", "news-9", "news-11"}) == {"news-3", "news-40", "news-7"}


def test_a_large_machine_listing_is_not_seen_but_a_small_file_is(tmp_path):
    ids = {f"news-{n}" for n in range(LISTING_SIZE + 5)}
    (tmp_path / "whole_draw.jsonl").write_text("\n".join(sorted(ids)))
    (tmp_path / "read_sample.jsonl").write_text("news-1000 news-1001")
    universe = ids | {"news-1000", "news-1001"}
    assert shown_ids([], [tmp_path], NEWS, universe) == {"news-1000", "news-1001"}
    # the same listing under a read folder: all seen
    assert shown_ids([tmp_path], [], NEWS, universe) == universe


def test_ids_outside_the_corpus_part_are_ignored(tmp_path):
    (tmp_path / "notes.md").write_text("news-1 and news-12 (news-12 is held out already)")
    assert shown_ids([tmp_path], [], NEWS, {"news-1"}) == {"news-1"}


def test_stratum_shares_name_a_known_stratum():
    assert stratum_shares(["short=0.5", "default=1"]) == {"short": 0.5, "default": 1.0}
    with pytest.raises(SystemExit, match="floor100=X"):
        stratum_shares(["long=0.5"])
