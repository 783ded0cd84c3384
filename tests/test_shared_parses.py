"""tests/shared_parses.py: parses made once per run, whichever worker asks first."""

from __future__ import annotations

import threading

from shared_parses import SharedParses, pipeline_key


class _Parsed:
    def __init__(self, text: str) -> None:
        self.text = text

    def to_bytes(self) -> bytes:
        return self.text.upper().encode()


class _CountingPipeline:
    """A stand-in pipeline: its 'parse' of a text is the text in capitals; it counts what it parsed."""

    meta = {"lang": "en", "name": "stand_in", "version": "1.0"}
    pipe_names = ["tagger", "parser"]

    def __init__(self) -> None:
        self.parsed: list[str] = []

    def pipe(self, texts, batch_size=32, n_process=1):  # type: ignore[no-untyped-def]
        for text in texts:
            self.parsed.append(text)
            yield _Parsed(text)


TEXTS = ["The tide turned at noon.", "Gulls circled the pier.", "The ferry left late."]


def test_a_text_parsed_by_one_worker_is_read_by_the_other(tmp_path):
    first, second = _CountingPipeline(), _CountingPipeline()
    assert SharedParses(tmp_path, first).parse(TEXTS[:2]) == {t: t.upper().encode() for t in TEXTS[:2]}
    assert SharedParses(tmp_path, second).parse(TEXTS) == {t: t.upper().encode() for t in TEXTS}
    assert first.parsed == TEXTS[:2] and second.parsed == TEXTS[2:]


def test_another_pipeline_does_not_share_the_parses(tmp_path):
    other = _CountingPipeline()
    other.pipe_names = ["tagger", "parser", "ner"]
    assert pipeline_key(other) != pipeline_key(_CountingPipeline())
    SharedParses(tmp_path, _CountingPipeline()).parse(TEXTS)
    SharedParses(tmp_path, other).parse(TEXTS)
    assert other.parsed == TEXTS


def test_a_text_locked_by_another_worker_is_waited_for_not_parsed_again(tmp_path):
    shared = SharedParses(tmp_path, _CountingPipeline())
    lock = shared._path(TEXTS[0], ".lock")
    lock.touch()  # the other worker is parsing it

    def other_worker_finishes() -> None:
        shared._store(TEXTS[0], b"THEIRS")
        lock.unlink()

    timer = threading.Timer(0.5, other_worker_finishes)
    timer.start()
    waiting = _CountingPipeline()
    assert SharedParses(tmp_path, waiting).parse(TEXTS)[TEXTS[0]] == b"THEIRS"
    timer.join()
    assert waiting.parsed == TEXTS[1:]


def test_a_lock_released_without_a_parse_is_parsed_here(tmp_path):
    shared = SharedParses(tmp_path, _CountingPipeline())
    lock = shared._path(TEXTS[0], ".lock")
    lock.touch()
    timer = threading.Timer(0.5, lock.unlink)  # the other worker failed on it
    timer.start()
    here = _CountingPipeline()
    assert SharedParses(tmp_path, here).parse(TEXTS[:1]) == {TEXTS[0]: TEXTS[0].upper().encode()}
    timer.join()
    assert here.parsed == TEXTS[:1] and not lock.exists()
