"""pyproject.toml's package data: every data file a package reads ships in
its wheel. A rule table missing from package-data works in an editable
install and fails on `pip install .` (session 21: object_control_verbs.json)."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def shipped_data_files() -> set[Path]:
    """The files setuptools adds to the wheel from [tool.setuptools.package-data] (its globs, per package)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    shipped: set[Path] = set()
    for package, patterns in config["tool"]["setuptools"]["package-data"].items():
        for pattern in patterns:
            shipped |= {path.relative_to(ROOT) for path in (ROOT / package).glob(pattern) if path.is_file()}
    return shipped


def test_every_tracked_data_file_of_a_package_ships() -> None:
    packages = ["engine", "adapters", "analysis", "simulation"]
    tracked = subprocess.run(["git", "ls-files", *packages], cwd=ROOT, capture_output=True, text=True, check=True)
    data_files = {Path(name) for name in tracked.stdout.split() if not name.endswith(".py")}
    assert data_files, "git ls-files found no data files: the test would prove nothing"
    assert data_files - shipped_data_files() == set()


def test_the_rule_tables_the_fingerprint_reads_ship() -> None:
    from engine.corpus.rules_fingerprint import RULE_DATA_FILES

    assert {path.relative_to(ROOT) for path in RULE_DATA_FILES} <= shipped_data_files()
