"""Every malformed config and corpus case of tests/reliability_bad_input.py
gets a non-zero exit and a message naming the file and the key or value at
fault (issue 15). Cases whose message does not yet do so are expected
failures, each naming why; RELIABILITY.md has the table of messages."""

from __future__ import annotations

from pathlib import Path

import pytest
from reliability_bad_input import CASES, names_what_is_wrong, run_case
from reliability_fixtures import copy_store

# Known gaps, each owned by another change of this session or reported in RELIABILITY.md.
# cases whose message is known not to name the file and the key yet (none left)
UNCLEAR: dict[str, str] = {}


@pytest.fixture(scope="module")
def store(prepared_store, tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    return copy_store(prepared_store, tmp_path_factory.mktemp("input") / "store")


def test_the_cases_cover_config_and_corpus() -> None:
    assert len(CASES) >= 20 and len({case.name for case in CASES}) == len(CASES)
    assert sum(case.corpus is not None for case in CASES) >= 5


@pytest.mark.parametrize(
    "case",
    [pytest.param(case, id=case.name, marks=[pytest.mark.xfail(reason=UNCLEAR[case.name], strict=False)] if case.name in UNCLEAR else [])
     for case in CASES],
)
def test_a_bad_input_is_refused_naming_the_file_and_the_key(case, store: Path, corpus_slice_path: Path, corpus_settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = run_case(case, tmp_path, store, corpus_slice_path, corpus_settings.min_chars_per_sentence)
    assert "UNCAUGHT" not in result["message"] and "Traceback" not in result["message"], result
    assert names_what_is_wrong(result), result
