"""The HTML report renders in a real headless browser (Chromium)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import pytest
from matplotlib import image as mpimg

from analysis.options import AnalysisOptions
from analysis.report import build_report
from analysis.synthetic import SyntheticJudge, reference_judges, synthetic_rows, write_run

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/test installs it with apt-get)"),
]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("browser")
    judges = reference_judges() + [SyntheticJudge(name="a-judge-with-a-long-name-to-widen-tables")]
    run_dir = write_run(tmp / "run", synthetic_rows(judges, size=3, docs_per_cell=12), {"run_id": "browser"})
    return build_report(run_dir, tmp / "report", options=AnalysisOptions(n_bootstrap=200, n_permutations=200))


def chromium(tmp_path, *args: str) -> subprocess.CompletedProcess:
    cmd = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}", *args,
    ]  # fmt: skip
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def test_report_renders_in_headless_chromium(tmp_path, report):
    paths = report
    shot = tmp_path / "shot.png"
    proc = chromium(tmp_path, f"--screenshot={shot}", "--window-size=1280,2000", paths.html.resolve().as_uri())
    assert proc.returncode == 0 and shot.exists(), proc.stderr[-2000:]
    pixels = mpimg.imread(shot)[..., :3]
    assert pixels.shape[:2] == (2000, 1280)
    # a blank page is one colour; the report has text, tables and flagged cells
    assert pixels.std() > 0.05
    flagged_red = np.all(np.abs(pixels - np.array([0xFD, 0xE0, 0xE0]) / 255) < 0.02, axis=-1)
    assert flagged_red.sum() > 100  # the faulty judge's flags are highlighted in the checks section at the top


# Appended to a copy of the page (the report itself carries no script): it
# measures the laid-out page and writes the result into the DOM, which
# --dump-dom prints once the page has loaded.
MEASURE = """
<script>
const column = document.querySelector("main").getBoundingClientRect();
const scrollers = [...document.querySelectorAll(".scroll, pre")];
const inScroller = el => scrollers.some(s => s !== el && s.contains(el));
const offenders = [];
for (const el of document.querySelectorAll("main *")) {
  if (inScroller(el) || el.closest("details:not([open])") && el.tagName !== "SUMMARY" && el.tagName !== "DETAILS") continue;
  const r = el.getBoundingClientRect();
  if (r.width === 0 && r.height === 0) continue;
  if (r.left < column.left - 1 || r.right > column.right + 1) {
    offenders.push(`${el.tagName}.${el.className} ${Math.round(r.left)}..${Math.round(r.right)}: ${el.textContent.slice(0, 40)}`);
  }
}
const wide = scrollers.filter(s => s.scrollWidth > s.clientWidth + 1).map(s => `${s.scrollWidth} > ${s.clientWidth}: ${s.textContent.slice(0, 60)}`);
const images = [...document.querySelectorAll("main img")].map(img => img.getBoundingClientRect().width);
const out = document.createElement("pre");
out.id = "layout-check";
out.textContent = JSON.stringify({
  column: column.width, viewport: window.innerWidth, pageWidth: document.documentElement.scrollWidth,
  images: images, widest: Math.max(...images), offenders: offenders, wide: wide,
});
document.body.appendChild(out);
</script>
"""


def test_nothing_overflows_the_column_at_laptop_width(tmp_path, report):
    page = report.html.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>")
    probe = report.html.with_name("layout-probe.html")
    probe.write_text(page, encoding="utf-8")
    proc = chromium(tmp_path, "--dump-dom", "--window-size=1366,900", probe.resolve().as_uri())
    match = re.search(r'<pre id="layout-check">(.*?)</pre>', proc.stdout, re.S)
    assert proc.returncode == 0 and match, proc.stderr[-2000:]
    layout = json.loads(match.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))
    assert layout["viewport"] == 1366 and 900 < layout["column"] <= 1366
    assert len(layout["images"]) >= 10
    assert layout["widest"] <= layout["column"], layout["images"]
    assert layout["pageWidth"] <= layout["viewport"]  # no sideways scrolling of the page
    assert layout["offenders"] == []
    assert layout["wide"] == []  # tables fit: headers and long text wrap instead of scrolling sideways
