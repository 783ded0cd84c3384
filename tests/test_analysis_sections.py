"""analysis.sections: what names the report's files."""

from __future__ import annotations

from analysis.sections import file_slug


def test_file_names_are_unique_per_judge_and_plain_names_stay_as_they_are() -> None:
    # judges "a/b" and "a-b" wrote the same figure files: the report listed 9, 6 existed (issue 33)
    names = ["a/b", "a-b", "a_b", "a b", "a:b", "a-b-", "gpt-4o", "Llama-3.1-8B", "größe"]
    slugs = [file_slug(name) for name in names]
    assert len(set(slugs)) == len(names), slugs
    assert file_slug("gpt-4o") == "gpt-4o" and file_slug("Llama-3.1-8B") == "Llama-3.1-8B"
    assert all("/" not in slug and "_" not in slug and " " not in slug for slug in slugs)  # "_" joins a figure's key parts
    assert file_slug("a/b").startswith("a-b-") and file_slug("a/b") == file_slug("a/b")  # stable across reports
