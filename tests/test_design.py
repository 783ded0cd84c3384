"""engine.run.design: cell enumeration, shared document orders, items and their calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.config import parse_config
from engine.run.design import Design, enumerate_cells

CONFIG = """
store = "s"
output = "o"
seed = 3
needles = ["none", "neg", "ner"]
hays = ["orig", "rand"]
positions = [[0, 0], [2, 1], [1, 3]]
replicates = 2
prompts = ["bands", "triples"]
[checks]
order_swap = 5
null_edit = 4
negative = 3
[[judges]]
name = "a"
adapter = "openai"
model = "m-a"
[[judges]]
name = "b"
adapter = "baseline"
model = "jaccard"
[[judges]]
name = "sim"
adapter = "openai"
model = "m-sim"
prompts = ["bands"]
"""


@pytest.fixture(scope="module")
def config():  # type: ignore[no-untyped-def]
    return parse_config(CONFIG, base_dir=Path("/tmp"))


@pytest.fixture(scope="module")
def design(config, corpus):  # type: ignore[no-untyped-def]
    from engine.corpus.pairs import document_order
    from engine.prompts import load_prompt

    prompts = {name: load_prompt(name) for name in ("bands", "triples", "pair")}
    return Design(config, corpus, prompts, document_order=document_order)


def test_cells_cover_the_full_factorial_plus_the_checks(config) -> None:  # type: ignore[no-untyped-def]
    cells = enumerate_cells(config)
    assert [c.cell_no for c in cells] == list(range(len(cells)))
    prompt_judges = 2 + 1 + 1  # a: bands+triples, b: pair, sim: bands
    experimental = prompt_judges * 3 * 2 * 3 * 2  # needles x hays x positions x replicates
    order_swap = prompt_judges * 3 * 2  # per judge x prompt x needle x hay
    controls = prompt_judges * 2
    assert len(cells) == experimental + order_swap + controls
    assert sum(not c.is_check for c in cells) == experimental
    assert len({(c.judge, c.prompt, c.needle, c.hay, c.i, c.j, c.replicate, c.order, c.control) for c in cells}) == len(cells)
    swaps = [c for c in cells if c.order == "21"]
    assert len(swaps) == order_swap and all(c.check_n == 5 and (c.i, c.j) == config.check_position() for c in swaps)
    assert {c.control for c in cells if c.control} == {"null_edit", "negative"}
    assert {c.prompt for c in cells if c.judge == "b"} == {"pair"}


def test_every_needle_hay_and_judge_sees_the_same_documents_in_the_same_order_at_a_position(design) -> None:  # type: ignore[no-untyped-def]
    by_position: dict[tuple[int, int], list[str]] = {}
    for cell in design.cells:
        order = design.order(cell)
        assert sorted(order) == sorted(design.corpus.doc_ids)
        assert by_position.setdefault((cell.i, cell.j), order) == order
    assert len({tuple(o) for o in by_position.values()}) == len(by_position)  # positions differ


def test_items_render_the_cells_pair_for_the_judge(design) -> None:  # type: ignore[no-untyped-def]
    cell = next(c for c in design.cells if c.judge == "a" and c.prompt == "triples" and c.needle == "neg" and c.replicate == 1)
    item = next(it for it in (design.item(cell, d) for d in range(design.doc_limit(cell))) if it is not None)
    assert item.pair.needle == "neg" and (item.pair.i, item.pair.j) == (cell.i, cell.j)
    assert item.pair.doc_id == design.order(cell)[item.doc_index]
    assert len(item.requests) == 2  # triples: one extraction per document
    for request in item.requests:
        assert (request.adapter, request.model) == ("openai", "m-a")
        assert request.replicate >= 1  # the cell's replicate index is in the key
    assert len(set(item.keys)) == 2


def test_order_swap_puts_the_perturbed_document_first(design) -> None:  # type: ignore[no-untyped-def]
    swap = next(c for c in design.cells if c.order == "21" and c.judge == "a" and c.prompt == "bands" and c.needle == "neg")
    normal = next(
        c
        for c in design.cells
        if c.judge == "a" and c.prompt == "bands" and c.needle == "neg" and c.hay == swap.hay and (c.i, c.j) == (swap.i, swap.j) and not c.is_check and c.replicate == 0
    )
    a, b = design.item(swap, 0), design.item(normal, 0)
    assert a is not None and b is not None and a.pair == b.pair
    text_swapped, text_normal = a.requests[0].messages[-1].content, b.requests[0].messages[-1].content
    assert text_swapped != text_normal
    assert text_normal.index(a.pair.needle_before) < text_normal.index(a.pair.needle_after)
    assert text_swapped.index(a.pair.needle_after) < text_swapped.index(a.pair.needle_before)


def test_check_cells_use_fixed_rules_and_caps(design, config) -> None:  # type: ignore[no-untyped-def]
    check = next(c for c in design.cells if c.control == "null_edit")
    rule = design.new_rule(check)
    assert rule.kind == "fixed"
    assert design.doc_cap(check) == 4
    experimental = design.cells[0]
    assert design.new_rule(experimental).kind == config.stopping.kind
    assert design.doc_cap(experimental) == design.doc_limit(experimental)  # paper rule: no cap but the corpus


def test_guided_regex_is_kept_only_for_judges_whose_backend_honours_it(corpus) -> None:  # type: ignore[no-untyped-def]
    from engine.config import parse_config
    from engine.run.design import Design
    from engine.corpus.pairs import document_order
    from engine.prompts import load_prompt

    judges = "".join(
        f'[[judges]]\nname = "{name}"\nadapter = "{adapter}"\nmodel = "m"\nbase_url = "http://127.0.0.1:1/v1"\n'
        for name, adapter in (("api", "openai"), ("vllm-server", "openai-compatible"), ("claude", "anthropic"))
    )
    config = parse_config('store = "s"\noutput = "o"\npositions = [[1, 2]]\nneedles = ["neg"]\nhays = ["orig"]\n' + judges)
    prompt = load_prompt("bands")
    assert prompt.render("a", "b")[0].decoding.guided_regex  # the prompt asks for it
    design = Design(config, corpus, {"bands": prompt}, document_order=document_order)
    requests = {}
    for cell in design.cells:
        item = design.item(cell, 0)
        requests[cell.judge] = (item.requests[0], item.keys[0])
    assert requests["vllm-server"][0].decoding.guided_regex == prompt.render("a", "b")[0].decoding.guided_regex
    assert requests["api"][0].decoding.guided_regex is None
    assert requests["claude"][0].decoding.guided_regex is None
    assert len({key for _, key in requests.values()}) == 3  # adapter family is in the key regardless
