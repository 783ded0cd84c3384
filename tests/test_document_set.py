"""engine.run.document_set: which documents the cells draw from (config `cell_documents`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli import main as cli_main
from engine.config import parse_config
from engine.contracts import ConfigError
from engine.run.document_set import document_set
from engine.run.experiment import Experiment
from experiments import write_experiment
from memory_corpus import MemoryCorpus
from scheduler_harness import design_toml, scripted_design

JUDGE = '[[judges]]\nname = "jaccard"\nadapter = "baseline"\nmodel = "jaccard"\n'


def config(tmp_path: Path, *, positions: str, cell_documents: str, hays: str = '["orig"]'):  # type: ignore[no-untyped-def]
    text = design_toml(seed=5, stopping='kind = "fixed"\nn = 3', window=2, needles='["none", "neg"]', positions=positions,
                       cell_documents=cell_documents).replace('hays = ["orig", "rand"]', f"hays = {hays}")  # fmt: skip
    return parse_config(text + JUDGE, base_dir=tmp_path)


def test_balanced_keeps_only_the_documents_with_room_for_the_widest_position(tmp_path: Path) -> None:
    # 7 documents of 9 sentences (middle 4: room 4 before, 4 after); every 3rd has 3 (room 1, 1)
    corpus = MemoryCorpus(documents=7, short_every=3)
    used, coverage = document_set(config(tmp_path, positions="[[0, 0], [1, 2]]", cell_documents="balanced"), corpus)
    assert used == ["doc-000", "doc-001", "doc-003", "doc-004", "doc-006"]
    assert (coverage.prepared, coverage.used, coverage.left_out, coverage.serve_every_cell) == (7, 5, 2, 5)
    assert coverage.widest == (1, 2)
    assert coverage.lines() == [
        'documents: 5 of the 7 prepared serve every cell (cell_documents = "balanced": each needle has room for (1, 2) in each hay); 2 left out'
    ]


def test_room_is_separable_so_the_widest_position_may_be_no_cell_of_the_design(tmp_path: Path) -> None:
    # (4, 0) and (0, 1): a document serves both only with 4 before and 1 after, i.e. room for (4, 1)
    corpus = MemoryCorpus(documents=6, short_every=3)
    used, coverage = document_set(config(tmp_path, positions="[[4, 0], [0, 1]]", cell_documents="balanced"), corpus)
    assert coverage.widest == (4, 1)
    assert used == ["doc-000", "doc-001", "doc-003", "doc-004"]


def test_all_keeps_every_document_and_warns_that_cells_differ(tmp_path: Path) -> None:
    corpus = MemoryCorpus(documents=7, short_every=3)
    used, coverage = document_set(config(tmp_path, positions="[[0, 0], [1, 2]]", cell_documents="all"), corpus)
    assert used == list(corpus.doc_ids) and coverage.left_out == 0
    # (0, 0) fits all 7; (1, 2) only the 5 long ones: the first such cell is named
    assert (coverage.cell_min, coverage.cell_max, coverage.fewest_cell) == (5, 7, "none/orig/(1,2)")
    first, warning = coverage.lines()
    assert "5 (none/orig/(1,2)) to 7 of the 7 prepared; 5 serve every cell" in first
    assert warning.startswith("warning: cells draw from different documents (5 to 7)")


def test_all_gives_no_warning_when_every_document_fits_every_cell(tmp_path: Path) -> None:
    corpus = MemoryCorpus(documents=7, short_every=3)
    _, coverage = document_set(config(tmp_path, positions="[[0, 0], [1, 1]]", cell_documents="all"), corpus)
    assert (coverage.cell_min, coverage.cell_max) == (7, 7) and len(coverage.lines()) == 1


def test_rand_hay_also_needs_the_donors_room(tmp_path: Path) -> None:
    # under rand the memory corpus's window needs the document's own room and its donor's:
    # a long document whose donor is short is left out too
    corpus = MemoryCorpus(documents=7, short_every=3)
    cfg = config(tmp_path, positions="[[0, 0], [1, 2]]", cell_documents="balanced", hays='["orig", "rand"]')
    used, _ = document_set(cfg, corpus)
    short = {"doc-002", "doc-005"}
    expected = [d for d in corpus.doc_ids if d not in short and corpus._donor(d, 5) not in short]
    assert used == expected and len(expected) < 5


def test_no_document_serving_every_cell_is_a_one_line_error(tmp_path: Path) -> None:
    corpus = MemoryCorpus(documents=4, short_every=0)  # 9 sentences each: room 4 either side
    with pytest.raises(ConfigError) as error:
        document_set(config(tmp_path, positions="[[0, 0], [5, 0]]", cell_documents="balanced"), corpus)
    message = str(error.value)
    assert "\n" not in message and "`cell_documents`" in message and "(5, 0)" in message and 'cell_documents = "all"' in message


def test_every_cell_of_a_balanced_design_orders_the_same_documents(tmp_path: Path) -> None:
    corpus = MemoryCorpus(documents=12, short_every=3)
    design = scripted_design(tmp_path, corpus=corpus)
    sets = {frozenset(design.order(cell)) for cell in design.cells}
    short = {d for d in corpus.doc_ids if len(corpus.docs[d]) == 3}
    serving = {d for d in corpus.doc_ids if d not in short and corpus._donor(d, 5) not in short}  # orig and rand hay
    assert sets == {frozenset(serving)} and design.coverage.used == len(serving) < 12
    # every cell can build a pair from every one of them
    assert all(design.pair(cell, doc) is not None for cell in design.cells for doc in design.order(cell))


def test_room_of_the_prepared_corpus_is_where_make_pair_stops_fitting(corpus) -> None:  # type: ignore[no-untyped-def]
    seed = 3
    for doc_id in corpus.doc_ids[:6]:
        for needle in ("none", "neg", "con", "ner"):
            before, after = corpus.room(doc_id, needle, "orig", seed, 9)
            assert corpus.make_pair(doc_id, needle, "orig", before, after, seed) is not None
            assert corpus.make_pair(doc_id, needle, "orig", before + 1, 0, seed) is None
            assert corpus.make_pair(doc_id, needle, "orig", 0, after + 1, seed) is None
        room = corpus.room(doc_id, "neg", "rand", seed, 9)
        assert room is not None and min(room) >= 9 and corpus.make_pair(doc_id, "neg", "rand", 9, 9, seed) is not None


@pytest.fixture
def experiment_config(tmp_path: Path, prepared_store, corpus_slice_path, corpus_settings):  # type: ignore[no-untyped-def]
    def make(cell_documents: str, folder: str) -> Path:
        body = (f'seed = 3\nneedles = ["neg", "con", "ner"]\nhays = ["orig"]\nk = 9\ncell_documents = "{cell_documents}"\n'
                '[stopping]\nkind = "fixed"\nn = 2\n' + JUDGE)  # fmt: skip
        return Path(write_experiment(tmp_path / folder, prepared_store, corpus_slice_path, corpus_settings, body).source)

    return make


def test_the_dry_run_says_which_documents_serve_and_the_setting_changes_the_run_id(experiment_config, capsys) -> None:  # type: ignore[no-untyped-def]
    balanced, everything = experiment_config("balanced", "b"), experiment_config("all", "a")
    assert cli_main(["run", str(balanced), "--dry-run"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("documents: "))
    assert "serve every cell" in line and "left out" in line
    assert cli_main(["run", str(everything), "--dry-run"]) == 0
    assert 'cell_documents = "all"' in capsys.readouterr().out
    from engine.config import load_config

    ids = []
    for path in (balanced, everything):
        experiment = Experiment(load_config(path))
        try:
            ids.append(experiment.run_id)
            coverage = experiment.design.coverage
        finally:
            experiment.close()
    assert ids[0] != ids[1]
    # the bundled slice: every kept document's needles were found where a (9, 9) window fits, or not
    assert coverage.serve_every_cell <= coverage.prepared


def test_the_run_records_the_document_set_and_the_report_says_it(experiment_config, capsys) -> None:  # type: ignore[no-untyped-def]
    path = experiment_config("all", "r")
    assert cli_main(["run", str(path), "--quiet"]) == 0
    manifest = json.loads((path.parent / "out" / "manifest.json").read_text())
    recorded = manifest["corpus"]["cell_documents"]
    assert recorded["setting"] == "all" and recorded["lines"][0].startswith('documents: cell_documents = "all"')
    from analysis.load import load_run

    assert recorded["lines"][0] in load_run(path.parent / "out").notes
