"""Why screening drops a document: every candidate sentence of each needle type and the check that refused it.

    # parse a draw's documents once with the default models (ner_screen.py's DocBin)
    python benchmarks/ner_screen.py parse news: OUT.spacy          # the whole news tuning part
    python benchmarks/ner_screen.py parse sotu:60:3131 OUT.spacy   # = draw --docs 60 --docs-seed 3131
    # per screening drop at the default settings: for neg, con and ner, each
    # sentence of the WHOLE document in scan order (distance from the middle,
    # inside the scan radius or not, whether a (9, 9) window fits around it),
    # the sentence gate's refusal, else each rule's: negation.refusal, each
    # "and"/"or" with conjunction_refusals' reason, each entity with the first
    # entity-rule check that refuses it
    python benchmarks/retention_drops.py OUT.spacy [--json OUT.jsonl] [--show neg,con,ner] [--min-chars 100]
    # grid retention: per length-kept document whether all three needle sentences have
    # 9 sentences either side; for those that miss it, every roomy sentence's refusals
    python benchmarks/retention_drops.py OUT.spacy --grid [--reason TEXT] [--json OUT.jsonl] [--min-chars 100]

`--min-chars` is the length filter's floor (prepare's default 150); pass the
draw's --min-chars-per-sentence (100 on the issue-27 news draws), or the
documents between the two floors are not screened at all. ner_screen.py's
parse skips texts shorter than 30 x 150 characters: for a draw at floor 100,
parse with that floor too, or the drops of the shorter documents are missed.

A drop is what prepare drops (the default scan, past the radius to sentences
with room for a (9, 9) window), so the list is the draw's. For each type
with no needle the last line names where its safe sentences lie: only
where no (9, 9) window fits (the position contract keeps them out), or
nowhere; and, per drop and summed over the drops, why the sentences the
scan reaches were refused (the gate's reason, or the rule's: the type's
refusals by reason, one count a sentence and reason). Never run it on
held-out documents.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # draw_needle_sample, ner_screen

GRID = 9  # the position grid's largest i and j (engine.corpus.pairs.DEFAULT_K)


def ner_refusal(ent, sent, entities, disputed: frozenset[str]) -> str:
    """The first check of engine.needles.entities.entity_options that refuses `ent` ("" if it is an option)."""
    from engine.needles import entities as E
    from engine.needles.edits import sentence_bounds
    from engine.needles.entity_form import date_in_a_name

    if ent.label_ not in E.NER_LABELS:
        return f"kind not used ({ent.label_})"
    span = E._without_article(ent)
    label = entities.labels.get(span.text)
    text = sent.text.strip()
    start = span.start_char - sentence_bounds(sent)[0]
    if label is None:
        return "disputed by the second model" if span.text in disputed else "no document label (votes, support, person evidence)"
    if not E._fits_label(span, label):
        return "form or syntax (_fits_label)"
    if span.text.endswith(("'s", "’s")):
        return "possessive"
    if label == "DATE" and date_in_a_name(span):
        return "date in a name"
    if span.start_char in entities.disputed_at:
        return "this mention disputed"
    if E.inside_quotes(text, start):
        return "inside quotes"
    if label != "DATE" and E._slot(span) is None:
        return "determiner (slot)"
    if label in E.PLACE_LABELS and E.place_of(span.text) is None:
        return "place unknown to the gazetteers"
    pool, _ = E._pool(span, label, sent, entities)
    if not pool:
        return "no same-kind place" if label in E.PLACE_LABELS else f"no other {label} in the document"
    options = E.entity_options(sent, entities)
    if any(o.start <= start < o.end for o in options):
        return ""
    return f"every one of {len(pool)} candidates filtered (shape, shared word, article)"


def diagnose(doc, settings) -> dict:
    from engine.corpus.sentence_gate import needle_refusals
    from engine.corpus.segmentation import document_sentences
    from engine.needles import entities as E
    from engine.needles.conjunctions import conjunction_refusals
    from engine.needles.edits import scan_order
    from engine.needles.negation import refusal

    sentences = document_sentences(doc)
    spans, texts = sentences.spans, sentences.texts
    n, middle = len(spans), len(spans) // 2
    gate = needle_refusals(doc, spans)
    year = doc.user_data.get("year")
    entities, disputed = E.document_entity_texts(doc, year), E.disputed_texts(doc)
    entities = E.with_gazetteer(doc, entities, year) or entities  # a no_ner drop had the gazetteers' places too
    radius = {"neg": settings.scan_radius, "con": settings.scan_radius, "ner": settings.ner_scan_radius}
    out = {"n": n, "middle": middle, "types": {}}
    for needle in ("neg", "con", "ner"):
        rows = []
        for k in scan_order(middle, n, n):
            row = {"k": k, "d": k - middle, "in_radius": abs(k - middle) <= radius[needle],
                   "fits_grid": in_grid(k, n), "gate": gate[k], "text": texts[k]}  # fmt: skip
            if not gate[k]:
                sent = spans[k]
                if needle == "neg":
                    row["why"] = [refusal(sent)]
                elif needle == "con":
                    row["why"] = [f"{t.text}@{t.i - sent.start}: {why}" if why else f"{t.text}@{t.i - sent.start}: OK" for t, why in conjunction_refusals(sent)] or ["no and/or"]
                else:
                    row["why"] = [f"{e.label_} {e.text!r}: {ner_refusal(e, sent, entities, disputed) or 'OK'}" for e in sent.ents] or ["no entity"]
                row["safe"] = any(w == "" or w.endswith(": OK") for w in row["why"])
            else:
                row["safe"] = False
            rows.append(row)
        out["types"][needle] = rows
    return out


def reached(row: dict) -> bool:
    """Whether prepare's scan reaches the row's sentence: inside the radius, or past it with room for a (9, 9) window."""
    return row["in_radius"] or row["fits_grid"]


def refusal_reasons(row: dict, needle: str) -> set[str]:
    """The reasons one reached sentence gives no needle of `needle` (one each): the gate's, else the rule's."""
    if row["gate"]:
        return {f"gate: {row['gate']}"}
    reasons = set()
    for why in row["why"]:
        if needle == "con" and ": " in why:
            why = why.split(": ", 1)[1]  # "and@5: correlative" -> "correlative"
        elif needle == "ner" and ": " in why:
            kind, why = why.split(" ", 1)[0], why.split(": ", 1)[1]  # "GPE 'Turkey': disputed" -> "GPE: disputed"
            why = f"{kind}: {why}" if not why.startswith("kind not used") else "another kind (ORG, NORP, ...)"
        if why not in ("OK", ""):
            reasons.add(why)
    return reasons


def why(path: str, json_out: str | None, show: set[str], min_chars: float | None = None) -> None:
    from ner_screen import load

    from engine.corpus.prepare import CorpusSettings, screen_document

    floor = {} if min_chars is None else {"min_chars_per_sentence": min_chars}
    settings = CorpusSettings(**floor)  # prepare's scan: the drops of the draw
    where: Counter[str] = Counter()
    reasons: dict[str, Counter[str]] = {"neg": Counter(), "con": Counter(), "ner": Counter()}
    drops: Counter[str] = Counter()
    lines = []
    kept_length = 0
    for doc in load(path):
        doc_id = doc.user_data["doc_id"]
        stored, reason = screen_document(doc_id, "", doc, settings, year=doc.user_data.get("year"))
        kept_length += reason not in ("too_few_sentences", "sentences_too_short", "sentences_too_long")
        if stored is not None or reason not in ("no_neg", "no_con", "no_ner"):
            continue
        drops[reason] += 1
        found = diagnose(doc, settings)
        found.update(doc_id=doc_id, drop=reason)
        lines.append(found)
        print(f"## {doc_id} {reason} (n={found['n']}, middle={found['middle']})")
        for needle, rows in found["types"].items():
            safe = [r for r in rows if r["safe"]]
            gate = Counter(r["gate"] for r in rows if reached(r) and r["gate"])
            at = ", ".join(f"k={r['k']} d={r['d']:+d}{'' if r['fits_grid'] else ' (no 9,9 window)'}" for r in safe[:4])
            print(f"  {needle}: safe in radius {sum(r['in_radius'] for r in safe)}, outside {sum(not r['in_radius'] for r in safe)} [{at}]; gate where reached {dict(gate)}")
            if any(reached(r) for r in safe):
                continue  # the diagnosis's "safe" is each rule's reason, close to but not exactly the screen
            lost = "safe only where no (9, 9) window fits" if safe else "no safe sentence anywhere"
            where[f"{needle}: {lost}"] += 1
            mine = Counter(why for r in rows if reached(r) for why in refusal_reasons(r, needle))
            reasons[needle].update(mine)
            print(f"    {lost}; reached sentences refused: {dict(mine.most_common())}")
            if needle in show:
                for r in rows:
                    if reached(r) and not r["gate"]:
                        print(f"    k={r['k']} d={r['d']:+d}: {' | '.join(r['why'])}")
                        print(f"        {r['text'][:220]}")
    print(f"# kept by the length filter {kept_length}, dropped by screening {sum(drops.values())} {dict(drops)}")
    print("# per type without a needle, where its safe sentences lie:", json.dumps(where.most_common()))
    for needle, counts in reasons.items():
        print(f"# {needle}: reasons of the reached sentences, summed over the drops (sentences):", json.dumps(counts.most_common()))
    if json_out:
        Path(json_out).write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")


def in_grid(k: int, n: int) -> bool:
    """Whether sentence k of n has GRID sentences above and below it (every default position holds its window)."""
    return GRID <= k <= n - 1 - GRID


def grid(path: str, json_out: str | None, show: set[str], min_chars: float | None = None, reason: str | None = None) -> None:
    """Per length-kept document: retention (a needle of each type) and grid retention (each needle sentence has
    GRID sentences either side); for each document that misses grid retention, why every roomy sentence
    (one that fits a (GRID, GRID) window) was refused, per type whose needle is missing or outside the grid."""
    from ner_screen import load

    from engine.corpus.prepare import CorpusSettings, screen_document

    settings = CorpusSettings(**({} if min_chars is None else {"min_chars_per_sentence": min_chars}))
    kept_length = kept = kept_grid = 0
    missing: Counter[str] = Counter()  # per type: documents whose needle is missing or outside the grid
    reasons: dict[str, Counter[str]] = {"neg": Counter(), "con": Counter(), "ner": Counter()}
    lines = []
    for doc in load(path):
        doc_id = doc.user_data["doc_id"]
        stored, drop = screen_document(doc_id, "", doc, settings, year=doc.user_data.get("year"))
        if drop in ("too_few_sentences", "sentences_too_short", "sentences_too_long"):
            continue
        kept_length += 1
        at = {}
        if stored is not None:
            kept += 1
            n = len(stored.sentences)
            at = {"neg": stored.neg.sentence, "con": stored.con.sentence, "ner": stored.ner_sentence}
            if all(in_grid(k, n) for k in at.values()):
                kept_grid += 1
                continue
        found = diagnose(doc, settings)
        types = {}
        for needle, rows in found["types"].items():
            roomy = [r for r in rows if r["fits_grid"]]
            if in_grid(at[needle], found["n"]) if needle in at else any(r["safe"] for r in roomy):
                continue  # a dropped document's other types: the diagnosis's safe, close to the screen's
            missing[needle] += 1
            for r in roomy:
                r["reasons"] = sorted(refusal_reasons(r, needle))
                reasons[needle].update(r["reasons"])
            types[needle] = roomy
        lines.append({"doc_id": doc_id, "drop": drop, "n": found["n"], "at": at, "types": types})
        print(f"## {doc_id} {drop or 'kept'} n={found['n']} needles at {at}: outside the grid {sorted(types)}")
        for needle, rows in types.items():
            if needle not in show:
                continue
            for r in rows:
                if reason is None or any(reason in x for x in r["reasons"]):
                    print(f"  {needle} k={r['k']}: {' | '.join(r['reasons'])}")
                    print(f"      {r['text'][:240]}")
    print(f"# kept by the length filter {kept_length}; retention {kept}/{kept_length} = {kept / max(kept_length, 1):.1%}; "
          f"grid retention {kept_grid}/{kept_length} = {kept_grid / max(kept_length, 1):.1%}")  # fmt: skip
    print("# documents per type whose needle is missing or outside the grid:", json.dumps(missing.most_common()))
    for needle, counts in reasons.items():
        print(f"# {needle}: reasons of the roomy sentences of those documents (sentences):", json.dumps(counts.most_common()))
    if json_out:
        Path(json_out).write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("docbin", help="a DocBin written by ner_screen.py parse")
    parser.add_argument("--json", default=None, help="every drop's rows as JSONL")
    parser.add_argument("--show", default="neg,con,ner", help="types whose refused sentences are printed")
    parser.add_argument("--min-chars", type=float, default=None, help="the length filter's floor (default: prepare's)")
    parser.add_argument("--grid", action="store_true", help="grid retention: every document whose needles do not all have room for the whole grid")
    parser.add_argument("--reason", default=None, help="with --grid: print only the roomy sentences refused for a reason containing this")
    args = parser.parse_args()
    if args.grid:
        return grid(args.docbin, args.json, set(args.show.split(",")), args.min_chars, args.reason)
    why(args.docbin, args.json, set(args.show.split(",")), args.min_chars)


if __name__ == "__main__":
    main()
