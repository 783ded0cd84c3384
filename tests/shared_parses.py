"""Parses shared by the pytest-xdist workers of one test run, by content.

Test files on different workers parse the same bundled articles with the same
pipelines (tests/test_needles.py's gold pins with sm and md, tests/test_prepare.py's
whole-sample store with both): a parse one worker makes is written to a
folder of the run's base temp directory as Doc bytes, and the other worker
reads it instead of parsing the text again. A worker locks a few texts at a
time (an O_EXCL file) before parsing them, so two workers asking for the same
texts at once split them between them and each waits only for the other's last
few. Nothing outlives the run, so every parse comes from this checkout's
pipeline; a lock left by a worker that died is waited for LOCK_TIMEOUT seconds
at most, then the text is parsed here.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

LOCK_TIMEOUT = 900.0
POLL_SECONDS = 0.2


def shared_root(base_temp: Path) -> Path:
    """The folder every worker of this run shares: under xdist each worker's base temp
    is a folder of the run's own (popen-gw0, popen-gw1)."""
    run = base_temp.parent if os.environ.get("PYTEST_XDIST_WORKER") else base_temp
    return run / "shared_parses"


def pipeline_key(nlp: Any) -> str:
    """The model and its components: which parses may stand for one another."""
    meta = nlp.meta
    described = f"{meta.get('lang')}_{meta.get('name')}=={meta.get('version')}|{','.join(nlp.pipe_names)}"
    return hashlib.sha256(described.encode()).hexdigest()[:24]


class SharedParses:
    """Doc bytes of `nlp`'s parses, made once per run by whichever worker asks first."""

    def __init__(self, root: Path, nlp: Any) -> None:
        self.nlp = nlp
        self.folder = root / pipeline_key(nlp)
        self.folder.mkdir(parents=True, exist_ok=True)

    def _path(self, text: str, suffix: str) -> Path:
        return self.folder / (hashlib.sha256(text.encode("utf-8")).hexdigest() + suffix)

    def _stored(self, text: str) -> bytes | None:
        path = self._path(text, ".doc")
        return path.read_bytes() if path.exists() else None

    def _lock(self, text: str) -> bool:
        try:
            os.close(os.open(self._path(text, ".lock"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False
        return True

    def _store(self, text: str, data: bytes) -> None:
        path = self._path(text, ".doc")
        partial = path.with_suffix(f".{os.getpid()}.part")
        partial.write_bytes(data)
        os.replace(partial, path)

    def parse(self, texts: Iterable[str], batch_size: int = 32, n_process: int = 1) -> dict[str, bytes]:
        """text -> Doc bytes for each text, parsing here only what no worker has parsed or is parsing."""
        wanted = list(dict.fromkeys(texts))
        parses: dict[str, bytes] = {}
        waiting: list[str] = []
        for start in range(0, len(wanted), batch_size):
            mine = []
            for text in wanted[start : start + batch_size]:
                stored = self._stored(text)
                if stored is not None:
                    parses[text] = stored
                elif self._lock(text):
                    mine.append(text)
                else:
                    waiting.append(text)
            parses.update(self._parse_locked(mine, batch_size, n_process))
        deadline = time.monotonic() + LOCK_TIMEOUT
        while waiting:
            stored = {text: data for text in waiting if (data := self._stored(text)) is not None}
            parses.update(stored)
            waiting = [text for text in waiting if text not in stored]
            abandoned = [text for text in waiting if not self._path(text, ".lock").exists() or time.monotonic() > deadline]
            if abandoned:  # the other worker failed on them (or died): parse them here
                parses.update(self._parse_locked(abandoned, batch_size, n_process, locked=False))
                waiting = [text for text in waiting if text not in parses]
            elif waiting:
                time.sleep(POLL_SECONDS)
        return parses

    def _parse_locked(self, texts: list[str], batch_size: int, n_process: int, *, locked: bool = True) -> dict[str, bytes]:
        parses: dict[str, bytes] = {}
        try:
            for text, doc in zip(texts, self.nlp.pipe(texts, batch_size=batch_size, n_process=n_process)):
                parses[text] = doc.to_bytes()
                self._store(text, parses[text])
                if locked:
                    self._path(text, ".lock").unlink(missing_ok=True)
        finally:
            if locked:
                for text in texts:
                    self._path(text, ".lock").unlink(missing_ok=True)
        return parses
