"""No API key leaves the environment, end to end (issue 15).

tests/test_secrets.py checks each adapter in-process; this runs the whole
command line as real processes: `needlejudge run` with five judges (OpenAI,
Azure, Anthropic, Gemini, an OpenAI-compatible server) against the fake
provider server injecting every fault kind, then with the key refused
(401) and with an unknown model (404), then `needlejudge report`. Every
provider key variable holds a distinctive fake key. The keys must appear
in no stdout or stderr, no byte of the LMDB store, no export and no report
file. Positive control: the server accepts only those keys, so every ok row
proves a key was read and sent.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from reliability_faults import TERMINAL_KINDS, fault, transient_mix
from reliability_fixtures import child_env, copy_store, experiment_toml, results, run_to_end, server_fixture

KEY_VARS = ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "NJ_RELIABILITY_KEY")
SECRETS = {name: f"sk-LEAKCHECK-{n}-7d1e0b9c4a" for n, name in enumerate(KEY_VARS)}
JUDGES = """
[[judges]]
name = "{name}"
adapter = "{adapter}"
model = "{model}"
base_url = "{base}"
concurrency = 4
timeout_s = 0.5
max_attempts = 3
options = {{ backoff_base_s = 0.01, backoff_cap_s = 0.1 }}
"""

server = server_fixture("fixed:0.01")


def judges(url: str, model_suffix: str = "") -> str:
    text = ""
    for name, adapter, model, base in (("gpt", "openai", "gpt-4o-mini", f"{url}/v1"), ("azure", "azure", "gpt-4o", url),
                                       ("claude", "anthropic", "claude-sonnet", url), ("gemini", "gemini", "gemini-2.0-flash", url)):
        text += JUDGES.format(name=name, adapter=adapter, model=model + model_suffix, base=base)
    text += JUDGES.format(name="vllm", adapter="openai-compatible", model="sim-judge" + model_suffix, base=f"{url}/v1")
    return text.replace('name = "vllm"', 'name = "vllm"\napi_key_env = "NJ_RELIABILITY_KEY"')


def test_no_key_reaches_output_logs_store_exports_or_report(server, prepared_store, corpus_slice_path, corpus_settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    env = child_env(**SECRETS)
    store = copy_store(prepared_store, tmp_path / "store")
    base = experiment_toml(store=store, output=tmp_path / "out", url=server.url, corpus=corpus_slice_path,
                           min_chars=corpus_settings.min_chars_per_sentence, needles='["neg"]', hays='["orig"]',
                           positions="positions = [[1, 1]]", n=4, checks=(0, 0, 2), judges=0)
    config = tmp_path / "exp.toml"
    config.write_text(base + judges(server.url))
    outputs: list[str] = []

    def run(*args: str, expect_ok: bool = True) -> None:
        code, out, err = run_to_end(config, *args, env=env)
        outputs.extend([out, err])
        assert (code == 0) == expect_ok, err

    # every fault kind; only these keys are valid
    server.configure(valid_keys=list(SECRETS.values()), faults=transient_mix(0.3) + [fault(k, 0.1) for k in TERMINAL_KINDS])
    run("--json")
    rows = results(tmp_path / "out" / "results.jsonl")
    assert {r["judge"] for r in rows if r["status"] == "ok"} == {"gpt", "azure", "claude", "gemini", "vllm"}  # positive control
    assert {r["status"] for r in rows} >= {"ok", "refused"}
    run("--dry-run")
    # the keys refused (401), then a model that does not exist (404): fatal, named, no key
    server.configure(valid_keys=["some-other-key"])
    config.write_text(config.read_text().replace("n = 4", "n = 5"))
    run("--replace", expect_ok=False)  # the config edited in place: a new run in the same output (issue 32)
    # the judge whose call comes back first is named (Gemini answers a bad key with 400 API_KEY_INVALID, the others 401)
    assert re.search(r"judge '(gpt|azure|claude|gemini|vllm)': the provider rejected the call \(auth\)", outputs[-1]), outputs[-1]
    server.configure(valid_keys=list(SECRETS.values()))
    config.write_text(base.replace("n = 4", "n = 6") + judges(server.url, "").replace('model = "gpt-4o-mini"', 'model = "missing-model"'))
    run("--replace", expect_ok=False)
    report = subprocess.run([sys.executable, "-m", "engine.cli", "report", str(tmp_path / "out"), "--bootstrap", "100", "--permutations", "100"],
                            capture_output=True, text=True, env=env, timeout=600)
    outputs.extend([report.stdout, report.stderr])
    assert report.returncode == 0, report.stderr
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "data.mdb" for p in files) and any(p.suffix == ".html" for p in files)
    assert any(p.name == "results.parquet" for p in files) and any(p.name == "manifest.json" for p in files)
    for secret in SECRETS.values():
        assert not any(secret in text for text in outputs), secret
        leaked = [str(p) for p in files if secret.encode() in p.read_bytes()]
        assert not leaked, (secret, leaked)
    # the variable names may appear (they say where a key comes from); the values never do
    assert all(os.environ.get(name) != value for name, value in SECRETS.items())
