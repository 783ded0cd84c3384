"""engine.labelling: the sample, the label log and the page's API, over a real
finished run (two offline judges on the session's prepared store) and real
HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from aiohttp import ClientSession

from engine.labelling.from_run import LABELS_FILE, SAMPLE_FILE, open_book
from engine.labelling.log import LabelLog, LabelRecord
from engine.labelling.sample import draw_sample
from engine.labelling.server import create_app, changed_span
from engine.run.runner import run_experiment
from experiments import write_experiment

ROOT = Path(__file__).resolve().parents[1]
BODY = """
needles = ["none", "neg", "con", "ner"]
hays = ["orig", "rand"]
k = 2
[stopping]
kind = "fixed"
n = 5
[checks]
order_swap = 4
null_edit = 0
negative = 0
[[judges]]
name = "jaccard"
adapter = "baseline"
model = "jaccard"
[[judges]]
name = "tfidf"
adapter = "baseline"
model = "tfidf"
"""


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory, prepared_store, corpus_slice_path, corpus_settings) -> Path:
    folder = tmp_path_factory.mktemp("label_run")
    config = write_experiment(folder, prepared_store, corpus_slice_path, corpus_settings, BODY)
    run_experiment(config, quiet=True)
    return folder / "out"


def rows(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


def test_the_sample_is_stratified_seeded_and_keeps_swap_disagreements(finished_run):
    results = rows(finished_run)
    sample = draw_sample(results, size=40, overlap=8, seed=1)
    assert sample == draw_sample(results, size=40, overlap=8, seed=1)
    assert len(sample) == 40 and len({s.item_id for s in sample}) == 40
    assert sum(s.overlap for s in sample) == 8
    strata = {s.stratum for s in sample}
    assert {"none/orig", "neg/rand"} <= {name.rsplit("/", 1)[0] for name in strata if name != "swap"}
    assert all(0 < s.inclusion <= 1 for s in sample)
    # every item a judge scored differently in the two orders is drawn (probability 1)
    by_order: dict = {}
    for r in results:
        if r["status"] == "ok" and not r["control"]:
            by_order.setdefault((r["doc_id"], r["needle"], r["hay"], r["i"], r["j"], r["judge"]), {})[r["order"]] = r["score"]
    swapped = {k[:5] for k, s in by_order.items() if len(s) == 2 and abs(s["12"] - s["21"]) >= 10}
    drawn = {s.key[:5] for s in draw_sample(results, size=400, overlap=0, seed=1) if s.stratum == "swap"}
    assert drawn == swapped
    # controls and failures are never labelled
    assert not {s.needle for s in sample} - {"none", "neg", "con", "ner"}


def test_the_log_survives_a_torn_line_and_keeps_the_latest_label(tmp_path):
    path = tmp_path / "labels.jsonl"
    log = LabelLog(path)
    record = LabelRecord(item_id="d|neg|orig|1|2|0", doc_id="d", needle="neg", hay="orig", i=1, j=2,
                         labeller="ann", label=40.0, raw=40.0, scale="0-100", at=1.0)
    log.append(record)
    with path.open("ab") as handle:
        handle.write(b'{"item_id": "d|con')  # a crash mid-write
    again = LabelLog(path)
    assert again.labels() == [record]
    again.append(msgspec.structs.replace(record, label=70.0, raw=70.0, at=2.0))
    assert [r.label for r in LabelLog(path).labels()] == [70.0]
    assert all(json.loads(line) for line in path.read_text().splitlines())  # the torn tail is gone
    # a log closed cleanly and opened again appends after its last line, nothing between
    third = LabelLog(path)
    third.append(msgspec.structs.replace(record, item_id="d|con|orig|1|2|0", needle="con"))
    assert path.read_bytes().count(b"\x00") == 0
    assert [json.loads(line)["needle"] for line in path.read_text().splitlines()] == ["neg", "neg", "con"]


def test_changed_span_marks_the_edit():
    a, b = "It was wide. Boats sailed.", "It was not wide. Boats sailed."
    (s1, e1), (s2, e2) = changed_span(a, b)
    assert a[s1:e1] == "" and b[s2:e2] == "not "


async def _serve(book, token=None):
    from aiohttp import web

    runner = web.AppRunner(create_app(book, token=token))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}"


@pytest.mark.anyio
async def test_the_api_refuses_bad_input_and_stores_nothing(finished_run, tmp_path):
    book = open_book(finished_run, tmp_path / "labels", size=12, overlap=3)
    runner, base = await _serve(book)
    try:
        async with ClientSession() as http:
            claimed = await (await http.post(f"{base}/api/claim", json={"labeller": "ann"})).json()
            session, first = claimed["session"], claimed["next"]
            item = await (await http.get(f"{base}/api/item/{first}", params={"session": session})).json()
            assert set(item) == {"item_id", "document_1", "document_2", "changed_1", "changed_2", "given"}  # no judge score
            for value, status in ((101, 400), (-1, 400), (50.5, 400), ("high", 400), (None, 400)):
                response = await http.post(f"{base}/api/label", json={"session": session, "item_id": first, "value": value})
                assert response.status == status, (value, await response.text())
            assert "off the scale" in await (await http.post(f"{base}/api/label", json={"session": session, "item_id": first, "value": 101})).text()
            unknown = await http.post(f"{base}/api/label", json={"session": session, "item_id": "nope|neg|orig|0|0|0", "value": 50})
            assert unknown.status == 404
            second = await http.post(f"{base}/api/claim", json={"labeller": "ann"})  # another page, same name, at once
            assert second.status == 409 and "another page" in await second.text()
            for path in ("/static/../server.py", "/static/%2e%2e/server.py", "/static/..%2fserver.py"):
                response = await http.get(f"{base}{path}")
                assert response.status in (403, 404), path
                assert "create_app" not in await response.text()
            assert not (tmp_path / "labels" / LABELS_FILE).exists()
            ok = await http.post(f"{base}/api/label", json={"session": session, "item_id": first, "value": 64})
            assert ok.status == 200 and (await ok.json())["done"] == 1
    finally:
        await runner.cleanup()
    stored = [json.loads(line) for line in (tmp_path / "labels" / LABELS_FILE).read_text().splitlines()]
    assert [(r["item_id"], r["raw"], r["label"], r["labeller"]) for r in stored] == [(first, 64.0, 64.0, "ann")]
    assert (tmp_path / "labels" / SAMPLE_FILE).exists()


@pytest.mark.anyio
async def test_a_token_guards_the_api(finished_run, tmp_path):
    book = open_book(finished_run, tmp_path / "labels", size=6, overlap=0)
    runner, base = await _serve(book, token="s3cret")
    try:
        async with ClientSession() as http:
            assert (await http.post(f"{base}/api/claim", json={"labeller": "bo"})).status == 403
            ok = await http.post(f"{base}/api/claim", json={"labeller": "bo"}, headers={"X-Label-Token": "s3cret"})
            assert ok.status == 200
    finally:
        await runner.cleanup()


def test_a_non_local_bind_without_a_token_is_refused(finished_run, tmp_path):
    done = subprocess.run([sys.executable, "-m", "engine.cli", "label", str(finished_run), "--host", "0.0.0.0"],
                          capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == "needlejudge label: error: --host 0.0.0.0: binding beyond this machine needs --token (a secret the page's address will carry)"


@pytest.mark.anyio
async def test_overlap_items_go_to_every_labeller_and_the_rest_to_one(finished_run, tmp_path):
    book = open_book(finished_run, tmp_path / "labels", size=10, overlap=4)
    overlap = {s.item.item_id for s in book.items if s.item.overlap}
    runner, base = await _serve(book)
    try:
        async with ClientSession() as http:
            ann = (await (await http.post(f"{base}/api/claim", json={"labeller": "ann"})).json())["session"]
            for _ in range(10):
                state = await (await http.get(f"{base}/api/state", params={"session": ann})).json()
                await http.post(f"{base}/api/label", json={"session": ann, "item_id": state["next"], "value": 50})
            bo = await (await http.post(f"{base}/api/claim", json={"labeller": "bo"})).json()
            assert bo["total"] == len(overlap) and bo["next"] in overlap
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_labels_export_and_import_back(finished_run, tmp_path, suffix):
    from engine.labelling.transfer import export_labels, import_labels

    book = open_book(finished_run, tmp_path / "a", size=8, overlap=2)
    for n, shown_item in enumerate(book.items[:5]):
        book.rate("ann", shown_item.item.item_id, 10 * n)
    exported = tmp_path / f"labels{suffix}"
    assert export_labels(book.log, exported) == 5
    other = open_book(finished_run, tmp_path / "b", size=8, overlap=2)  # the same sample, drawn again
    assert import_labels(other.log, exported, [s.item for s in other.items]) == 5
    assert import_labels(other.log, exported, [s.item for s in other.items]) == 0  # twice changes nothing
    assert [(r.item_id, r.label) for r in other.log.labels()] == [(r.item_id, r.label) for r in book.log.labels()]


def test_an_import_with_a_foreign_item_writes_nothing(finished_run, tmp_path):
    from engine.contracts import ConfigError
    from engine.labelling.transfer import import_labels

    book = open_book(finished_run, tmp_path / "a", size=8, overlap=2)
    good = msgspec.to_builtins(LabelRecord(item_id=book.items[0].item.item_id, doc_id="d", needle="neg", hay="orig", i=0, j=0,
                                           labeller="ann", label=50.0, raw=50.0, scale="0-100", at=1.0))
    bad = {**good, "item_id": "other|neg|orig|0|0|0"}
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(ConfigError, match=r"in.jsonl record 2: item 'other\|neg\|orig\|0\|0\|0' is not in this run's label sample; nothing imported"):
        import_labels(book.log, path, [s.item for s in book.items])
    assert book.log.labels() == [] and not book.log.path.exists()
