"""Corpus readers: every input shape, errors naming file and record, input checks."""

from __future__ import annotations

import json

import pytest

from engine.contracts import ConfigError
from engine.corpus.cleaning import clean_text, is_heading
from engine.corpus.reading import check_inputs, read_documents

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


def test_a_txt_first_line_is_a_title_only_when_it_looks_like_one(tmp_path, bundled_corpus_path):
    # issue 33: an article saved on one line lost that line as its title and was dropped as empty_after_cleaning
    article = json.loads(bundled_corpus_path.read_text(encoding="utf-8"))[0]
    one_line = " ".join(line for line in article["text"].split("\n")[1:] if line)  # its prose, without the title, on one line
    (tmp_path / "one_line.txt").write_text(one_line + "\n")
    (tmp_path / "prose_first.txt").write_text("It was a cold day.\nThe river froze.\n")
    (tmp_path / "titled.txt").write_text(f"{article['title']}\n\n{one_line}\n")
    docs = {doc.doc_id: doc for doc in read_documents([tmp_path])}
    assert docs["one_line"].title == "" and clean_text(docs["one_line"].text, docs["one_line"].title) == one_line.strip()
    assert docs["prose_first"].title == "" and clean_text(docs["prose_first"].text).startswith("It was a cold day.")
    assert docs["titled"].title == article["title"]
    assert clean_text(docs["titled"].text, docs["titled"].title) == one_line.strip()


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
        ("empty.json", "", "empty file"),
        ("blank.jsonl", "\n\n", "empty file"),
        ("bad.json", '[{"id": "1", "text": "x", "date": "June 1812"}]', "record 0: field 'date' must be a year or an ISO date"),
    ],
)
def test_errors_name_the_file_and_record(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(ConfigError, match=message) as info:
        list(read_documents([path]))
    assert str(path) in str(info.value)
    if message in ("unknown corpus file type", "empty file"):  # found from the file's start: before any store exists
        with pytest.raises(ConfigError, match=message):
            check_inputs([path])
    else:
        check_inputs([path])


def test_a_document_is_dated_by_its_record_or_by_a_dated_title(tmp_path):
    # the year it was written, for the ner rules on old documents (engine.needles.states_then)
    records = [
        {"id": "a", "title": "Annual Message, 1821 (James Monroe)", "text": "x"},
        {"id": "b", "title": "Report (1901)", "text": "x"},
        {"id": "c", "title": "The 1812 Overture", "text": "x"},  # a year the title is about, not its date
        {"id": "d", "title": "Annual Message, 1821", "text": "x", "date": "1999-05-02"},  # the record's own date wins
        {"id": "e", "title": "Notes", "text": "x", "date": 1877},
        {"id": "f", "title": "Letters, 1820 and 1821", "text": "x"},  # two years: no date
    ]
    (tmp_path / "dated.json").write_text(json.dumps(records))
    years = {doc.doc_id: doc.year for doc in read_documents([tmp_path / "dated.json"])}
    assert years == {"a": 1821, "b": 1901, "c": None, "d": 1999, "e": 1877, "f": None}


def test_input_check_reads_only_the_start(tmp_path):
    # a record error deep in a file is the reader's to find, not the check's
    path = tmp_path / "late.json"
    path.write_text(json.dumps(RECORDS + [{"id": "3"}]))
    check_inputs([path, tmp_path])
    with pytest.raises(ConfigError, match="record 2: field 'text'"):
        list(read_documents([path]))


def test_missing_inputs(tmp_path):
    for read in (lambda paths: list(read_documents(paths)), check_inputs):
        with pytest.raises(ConfigError, match="no such corpus file"):
            read([tmp_path / "missing.json"])
        (tmp_path / "empty").mkdir(exist_ok=True)
        with pytest.raises(ConfigError, match="holds no corpus files"):
            read([tmp_path / "empty"])


def test_bundled_corpus_reads_and_cleans(bundled_corpus_path):
    docs = list(read_documents([bundled_corpus_path]))
    assert len(docs) > 2000
    cleaned = [clean_text(d.text, d.title) for d in docs[:200]]
    for d, text in zip(docs[:200], cleaned):
        lines = text.split("\n") if text else []
        assert d.title not in lines[:1]
        assert not any(is_heading(line) for line in lines)
