"""benchmarks/draw_needle_sample.py: the read sample's rand-hay windows, the short-document stratum."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from draw_needle_sample import draw, hay_records, read_doc_ids  # noqa: E402


class TwoDonorCorpus:
    """Six documents whose rand hay all comes from one of two donors, each with one clean center."""

    doc_ids = [f"doc-{k}" for k in range(6)]

    def donor(self, doc_id: str) -> str:
        return "donor-a" if int(doc_id[-1]) % 3 else "donor-b"

    def make_pair(self, doc_id, needle, hay, i, j, seed):  # type: ignore[no-untyped-def]
        return SimpleNamespace(hay_doc_id=self.donor(doc_id), needle_before=f"The lamp in {doc_id} was lit.")

    def rand_hay_window(self, doc_id, seed, i, j):  # type: ignore[no-untyped-def]
        return self.donor(doc_id), 12

    def document(self, doc_id):  # type: ignore[no-untyped-def]
        return SimpleNamespace(sentences=[f"Line {k} of {doc_id}." for k in range(30)])


def test_a_read_sample_draws_each_hay_window_once():
    records = hay_records(TwoDonorCorpus(), "toy", n=5, seed=5841)
    assert sorted((r["hay_doc_id"], r["center"]) for r in records) == [("donor-a", 12), ("donor-b", 12)]


def test_a_corpus_the_length_filter_empties_ends_in_one_line_naming_it(tmp_path):
    import json
    import subprocess

    corpus = tmp_path / "short_lines.json"
    def text(town: str) -> str:  # 40 sentences of ~30 characters; a line shared by documents is boilerplate
        return " ".join(f"Gull {k} sat on the {town} wall." for k in range(40))

    records = [{"id": f"d{k}", "title": "Gulls", "text": text(town)} for k, town in enumerate(["Cobh", "Kinsale", "Dingle"])]
    corpus.write_text(json.dumps(records), encoding="utf-8")
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "draw_needle_sample.py"
    done = subprocess.run([sys.executable, str(script), "--corpus", str(corpus), "--n", "1"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"draw_needle_sample: --corpus {corpus}: the length filter removed all 3 documents"), line


class ShortAndLongCorpus:
    """Four documents of 20, 40, 25 and 35 sentences whose every needle passes."""

    doc_ids = ["doc-0", "doc-1", "doc-2", "doc-3"]
    lengths = {"doc-0": 20, "doc-1": 40, "doc-2": 25, "doc-3": 35}

    def make_pair(self, doc_id, needle, hay, i, j, seed):  # type: ignore[no-untyped-def]
        return SimpleNamespace(needle_before=f"The lamp in {doc_id} was lit.", needle_after=f"The lamp in {doc_id} was not lit.")

    def needle_sentence(self, doc_id, needle, seed):  # type: ignore[no-untyped-def]
        return (3,)

    def needle_edit(self, doc_id, needle, seed):  # type: ignore[no-untyped-def]
        return None

    def document(self, doc_id):  # type: ignore[no-untyped-def]
        return SimpleNamespace(title="Lamps", sentences=[f"Line {k}." for k in range(self.lengths[doc_id])])


def test_below_sentences_draws_needles_only_from_the_short_documents_and_no_hay():
    records = draw(ShortAndLongCorpus(), "toy", n=10, seed=6001, context=1, below_sentences=30)
    assert {r["kind"] for r in records} == {"needle"}
    assert sorted({r["doc_id"] for r in records}) == ["doc-0", "doc-2"]
    assert sorted(r["type"] for r in records) == ["con", "con", "neg", "neg", "ner", "ner"]
    everything = draw(ShortAndLongCorpus(), "toy", n=10, seed=6001, context=1, below_sentences=41)
    assert len({r["doc_id"] for r in everything}) == 4


def test_read_doc_ids_collects_every_document_a_label_file_names(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"doc_id": "news-1", "type": "neg"}\nnot json\n{"doc_id": "news-2", "hay_doc_id": "news-3"}\n')
    (tmp_path / "b.jsonl").write_text('{"doc_id": "sotu-1790_x", "label": "C"}\n')
    (tmp_path / "notes.md").write_text('{"doc_id": "news-9"}\n')  # only label files count
    assert read_doc_ids(tmp_path) == {"news-1", "news-2", "news-3", "sotu-1790_x"}
