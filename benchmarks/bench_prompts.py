"""Per-item CPU cost of the prompt layer and of the offline baseline judges.

Documents are real windows of the bundled Wikipedia sample (about 10
sentences, ~1,500 characters), the second with one word inserted mid-text,
as a needle pair would be. Reported in microseconds per item, each against
a reference measured in the same run:

- render / verdict against `request_key` of the same call (the cache key the
  engine must compute for every call anyway);
- baseline measures against difflib's SequenceMatcher ratio (autojunk off),
  the obvious pure-Python character-level measure.

    python benchmarks/bench_prompts.py [--items 2000]
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import platform
import time
from collections.abc import Callable
from importlib import resources

from adapters.baseline import MEASURES
from engine.contracts import CallRequest, CallResult, request_key
from engine.prompts import load_prompt
from engine.prompts.triples import load_lemmatiser


def pairs(count: int) -> list[tuple[str, str]]:
    articles = json.loads(resources.files("engine").joinpath("data/wiki_sample.json").read_text(encoding="utf-8"))
    texts = [article["text"][:1500] for article in articles if len(article["text"]) >= 1500]
    out = []
    for index in range(count):
        text = texts[index % len(texts)]
        middle = text.rfind(" ", 0, len(text) // 2)
        out.append((text, text[:middle] + " not" + text[middle:]))
    return out


def per_item_us(function: Callable[[int], object], count: int) -> float:
    started = time.perf_counter()
    for index in range(count):
        function(index)
    return (time.perf_counter() - started) / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    args = parser.parse_args()
    n = args.items
    items = pairs(n)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, python {platform.python_version()}")
    print(f"items: {n} pairs of ~{sum(len(a) for a, _ in items) // n} characters\n")

    print(f"{'step':42} {'us/item':>9} {'reference us':>13} {'ratio':>7}")
    for prompt_id in ("bands", "triples", "pair"):
        prompt = load_prompt(prompt_id)
        calls = [prompt.render(first, second) for first, second in items]
        requests = [[as_request(call) for call in rendered] for rendered in calls]
        render = per_item_us(lambda i: prompt.render(*items[i]), n)
        key = per_item_us(lambda i: [request_key(r) for r in requests[i]], n)
        print(f"{'render ' + prompt_id:42} {render:9.1f} {key:13.1f} {render / key:7.2f}")

    bands = load_prompt("bands")
    bands_requests = [request_for(bands, pair) for pair in items]
    key = per_item_us(lambda i: request_key(bands_requests[i]), n)
    for label, text in (("bare '85'", "85"), ("reasoning + 'Score: 85'", "The documents differ in one sentence. " * 10 + "\n\nScore: 85")):
        result = (CallResult(status="ok", text=text),)
        verdict = per_item_us(lambda i: bands.verdict(result), n)
        print(f"{'verdict bands, ' + label:42} {verdict:9.1f} {key:13.1f} {verdict / key:7.2f}")

    triples = load_prompt("triples")
    load_lemmatiser()
    extraction = json.dumps({"triples": [{"subject": f"entity {k}", "relation": f"was founded in {k}", "object": "the town"} for k in range(15)]})
    results = (CallResult(status="ok", text=extraction), CallResult(status="ok", text=extraction))
    verdict = per_item_us(lambda i: triples.verdict(results), min(n, 500))
    print(f"{'verdict triples, 15+15 triples (warm)':42} {verdict:9.1f} {key:13.1f} {verdict / key:7.2f}")

    slow_n = max(20, n // 20)
    difflib_us = per_item_us(lambda i: difflib.SequenceMatcher(None, *items[i], autojunk=False).ratio(), slow_n)
    for name, measure in MEASURES.items():
        cost = per_item_us(lambda i: measure(*items[i]), n)
        print(f"{'baseline ' + name:42} {cost:9.1f} {difflib_us:13.1f} {cost / difflib_us:7.4f}")


def as_request(call) -> CallRequest:
    return CallRequest(namespace=call.namespace, adapter="x", model="m", revision="", messages=call.messages, decoding=call.decoding)


def request_for(prompt, pair: tuple[str, str]) -> CallRequest:
    (call,) = prompt.render(*pair)
    return as_request(call)


if __name__ == "__main__":
    main()
