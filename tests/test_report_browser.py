"""The HTML report renders in a real headless browser (Chromium)."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from matplotlib import image as mpimg

from analysis.options import AnalysisOptions
from analysis.report import build_report
from analysis.synthetic import reference_judges, synthetic_rows, write_run

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/test installs it with apt-get)"),
]


def test_report_renders_in_headless_chromium(tmp_path):
    run_dir = write_run(tmp_path / "run", synthetic_rows(reference_judges(), size=3, docs_per_cell=12), {"run_id": "browser"})
    paths = build_report(run_dir, tmp_path / "report", options=AnalysisOptions(n_bootstrap=200, n_permutations=200))
    shot = tmp_path / "shot.png"
    cmd = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}", "--window-size=1280,2000",
        paths.html.resolve().as_uri(),
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and shot.exists(), proc.stderr[-2000:]
    pixels = mpimg.imread(shot)[..., :3]
    assert pixels.shape[:2] == (2000, 1280)
    # a blank page is one colour; the report has text, tables and flagged cells
    assert pixels.std() > 0.05
    flagged_red = np.all(np.abs(pixels - np.array([0xFD, 0xE0, 0xE0]) / 255) < 0.02, axis=-1)
    assert flagged_red.sum() > 100  # the faulty judge's flags are highlighted in the checks section at the top
