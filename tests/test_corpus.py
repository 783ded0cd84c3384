"""Corpus readers (every input shape, errors naming file and record) and cleaning."""

from __future__ import annotations

import json

import pytest

from engine.contracts import ConfigError
from engine.corpus import clean_text, is_heading, read_documents

ARTICLE = (
    "Mill Town\n"
    "\n"
    "Mill Town is a village on the river. It was founded in 1850 and grew quickly.\n"
    "History.\n"
    "The mill opened in 1851. The railway arrived in 1870, and the\n"
    "population doubled within ten years.\n"
    "Early life and education.\n"
    "Notable residents.\n"
    "Famous people\n"
    "* John Smith, miller\n"
    "- Mary Jones\n"
    "1. First item here.\n"
    "{| class=wikitable\n"
    "| a || b\n"
    " for (i = 0; i < n; i++) { x[i] = 0; }\n"
    "The energy is formula_1 where formula_2 is the mass.\n"
    "The village holds a fair every May &amp; a market every week.\n"
    "Economy.\n"
    "Tourism and fishing are the main industries!\n"
    "See also.\n"
    "Other mill towns are listed elsewhere.\n"
    "References.\n"
    "Smith, J. (1990). Mill towns. Publisher.\n"
)


def test_cleaning_keeps_prose_only():
    cleaned = clean_text(ARTICLE, "Mill Town")
    assert cleaned.split("\n") == [
        "Mill Town is a village on the river. It was founded in 1850 and grew quickly.",
        "The mill opened in 1851. The railway arrived in 1870, and the population doubled within ten years.",
        "The village holds a fair every May & a market every week.",
        "Tourism and fishing are the main industries!",
    ]


def test_headings():
    assert is_heading("Results.") and is_heading("Early life and education.")
    assert not is_heading("He died in 1990. He was buried in Rome.")
    assert not is_heading("The mill opened in 1851 and closed in 1900 after a long decline in trade.")
    assert not is_heading("Famous people")


def test_cleaning_drops_the_title_only_when_it_repeats():
    assert clean_text("Alpha\nAlpha is a letter.", "Alpha") == "Alpha is a letter."
    assert clean_text("Alpha is a letter.", "Alpha") == "Alpha is a letter."
    assert clean_text("References.\nA book.", "") == ""


RECORDS = [
    {"id": "1", "title": "One", "text": "One\nFirst text."},
    {"id": 2, "title": "Two", "text": "Two\nSecond text."},
]


def ids(docs):
    return [d.doc_id for d in docs]


def test_json_array_files_and_folders(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(RECORDS))
    (tmp_path / "b.json").write_text(json.dumps([{"id": "3", "title": "T", "text": "x"}]))
    assert ids(read_documents([tmp_path / "a.json"])) == ["1", "2"]
    assert ids(read_documents([tmp_path / "a.json", tmp_path / "b.json"])) == ["1", "2", "3"]
    assert ids(read_documents([tmp_path])) == ["1", "2", "3"]


def test_json_lines(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in RECORDS) + "\n\n")
    docs = list(read_documents([path]))
    assert ids(docs) == ["1", "2"] and docs[1].title == "Two"


def test_wikiextractor(tmp_path):
    path = tmp_path / "wiki_00"
    path.write_text(
        '<doc id="12" url="https://x/?curid=12" title="Tom &amp; Jerry">\nTom &amp; Jerry\n\nIt is a cartoon.\n</doc>\n'
        '<doc id="13" url="u" title="B">\nB\nSecond.\n</doc>\n'
    )
    docs = list(read_documents([path]))
    assert ids(docs) == ["12", "13"]
    assert docs[0].title == "Tom & Jerry"
    assert clean_text(docs[0].text, docs[0].title) == "It is a cartoon."


def test_txt_folder(tmp_path):
    (tmp_path / "alpha.txt").write_text("Alpha\nAlpha is a letter.\n")
    (tmp_path / "beta.txt").write_text("Beta is another letter.\n")
    docs = list(read_documents([tmp_path]))
    assert ids(docs) == ["alpha", "beta"]
    assert clean_text(docs[0].text, docs[0].title) == "Alpha is a letter."


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.json", '[{"id": "1", "title": "A", "text": "x"}, {"id": "2", "title": "B"}]', "record 1: field 'text'"),
        ("bad.json", '[{"title": "A", "text": "x"}]', "record 0: field 'id'"),
        ("bad.json", '{"not": "an array"', "invalid JSON"),
        ("bad.json", '[1, 2]', "record 0: expected an object"),
        ("obj.json", '"text"', "expected a JSON array"),
        ("bad.jsonl", '{"id": "1", "text": "x"}\n{broken\n', "line 2: invalid JSON"),
        ("bad.jsonl", '{"id": "1", "text": 5}\n', "line 1: field 'text'"),
        ("wiki_01", '<doc id="1" title="A">\nunterminated', "no complete <doc"),
        ("data.csv", "id,text\n1,x\n", "unknown corpus file type"),
    ],
)
def test_errors_name_the_file_and_record(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(ConfigError, match=message) as info:
        list(read_documents([path]))
    assert str(path) in str(info.value)


def test_missing_inputs(tmp_path):
    with pytest.raises(ConfigError, match="no such corpus file"):
        list(read_documents([tmp_path / "missing.json"]))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="holds no corpus files"):
        list(read_documents([tmp_path / "empty"]))


def test_bundled_corpus_reads_and_cleans(bundled_corpus_path):
    docs = list(read_documents([bundled_corpus_path]))
    assert len(docs) > 2000
    cleaned = [clean_text(d.text, d.title) for d in docs[:200]]
    for d, text in zip(docs[:200], cleaned):
        lines = text.split("\n") if text else []
        assert d.title not in lines[:1]
        assert not any(is_heading(line) for line in lines)
