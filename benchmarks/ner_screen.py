"""ner retention and needles on a corpus, parsed once: the issue-27 tuning tool.

    # parse once with the default models; Docs (with the second model's
    # entities) are kept in a spaCy DocBin
    python benchmarks/ner_screen.py parse CORPUS.json OUT.spacy
    # screen every document as `prepare` does (length filter, neg, con, ner):
    # drops by reason, and the seeded ner needle (`pairs --seed 1`) of the first
    # --show documents with two sentences of context, for reading by hand
    python benchmarks/ner_screen.py screen OUT.spacy [--min-chars 100] [--radius R] [--show N]
    # every entity in the ner scan window of each no_ner document and why the
    # rules refuse it (what refuses most)
    python benchmarks/ner_screen.py why OUT.spacy [--min-chars 100]

CORPUS.json: a JSON array of {id, title, text}, or `news:N:SEED` /
`sotu:N:SEED` / `wiki`: the seeded sample benchmarks/draw_needle_sample.py
draws with `--corpus news --docs N --docs-seed SEED` (held-out documents
excluded). Cleaning is prepare's: clean_text, then the corpus's boilerplate
cut (engine.corpus.boilerplate); texts prepare would not parse (too short,
too long) are skipped. `--min-chars` defaults to prepare's default.
Never run it on the held-out documents (tests/data/heldout).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # draw_needle_sample

LENGTH_DROPS = ("too_few_sentences", "sentences_too_short", "sentences_too_long")


def parse(corpus: str, out: str, min_chars: float | None = None) -> None:
    from spacy.tokens import DocBin

    from engine.corpus.cleaning import clean_text
    from engine.corpus.interviews import mark_speech_label
    from engine.corpus.nlp import load_nlp

    import tempfile

    from engine.corpus.boilerplate import corpus_boilerplate, remove_pieces
    from engine.corpus.prepare import CorpusSettings
    from engine.corpus.reading import record_year
    from draw_needle_sample import corpus_records, subsample

    if ":" in corpus or corpus == "wiki":  # the draw's sample: news:220:3127
        name, n, seed = (corpus.split(":") + ["", ""])[:3]
        records = subsample(corpus_records(name, "exclude")[1], int(n) if n else None, int(seed or 27))
    else:
        records = json.loads(Path(corpus).read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "corpus.json"
        source.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
        boilerplate = corpus_boilerplate([source])
    settings = CorpusSettings() if min_chars is None else CorpusSettings(min_chars_per_sentence=min_chars)
    nlp = load_nlp(settings.model)
    texts = []
    for record in records:
        text = remove_pieces(clean_text(record["text"], record.get("title", "")), boilerplate)[0]
        if settings.min_sentences * settings.min_chars_per_sentence <= len(text) <= getattr(nlp, "max_length", 1_000_000):
            year = record_year(corpus, record.get("date"), record.get("title", ""))
            texts.append((text, (str(record["id"]), year, record["text"])))
    docs = DocBin(store_user_data=True)
    for doc, (doc_id, year, raw_text) in nlp.pipe(texts, as_tuples=True, batch_size=16):
        doc.user_data["doc_id"], doc.user_data["year"] = doc_id, year
        mark_speech_label(doc, raw_text)  # as prepare does
        docs.add(doc)
    docs.to_disk(out)


def load(path: str) -> list:
    from spacy.tokens import DocBin

    from engine.corpus.nlp import load_nlp

    return list(DocBin(store_user_data=True).from_disk(path).get_docs(load_nlp("en_core_web_sm").vocab))


def screen(path: str, min_chars: float | None, radius: int | None, show: int) -> dict:
    from engine.corpus.needle_gold import seeded_ner_output
    from engine.corpus.prepare import CorpusSettings, screen_document

    chosen = {"min_chars_per_sentence": min_chars, "ner_scan_radius": radius}
    settings = CorpusSettings(**{k: v for k, v in chosen.items() if v is not None})
    drops: Counter[str] = Counter()
    labels: Counter[str] = Counter()
    kept_length = shown = 0
    for doc in load(path):
        doc_id = doc.user_data["doc_id"]
        stored, reason = screen_document(doc_id, "", doc, settings, year=doc.user_data.get("year"))
        if reason in LENGTH_DROPS:
            drops[reason] += 1
            continue
        kept_length += 1
        if stored is None:
            drops[reason] += 1
            continue
        k, sentences = stored.ner_sentence, stored.sentences
        output = seeded_ner_output(sentences[k], stored.ner_options, doc_id)
        at = next(i for i, (a, b) in enumerate(zip(sentences[k], output)) if a != b)
        option = next(o for o in stored.ner_options if o.start <= at <= o.end)
        labels[option.label] += 1
        # a needle this near an end leaves no room for a (9, 9) orig window
        labels["near_an_end"] += k < 9 or k > len(sentences) - 10
        if shown < show:
            shown += 1
            after = output[option.start : len(output) - (len(sentences[k]) - option.end)]
            print(f"## {shown} {doc_id} [{option.label}] {option.text!r} -> {after!r}")
            print(f"   ctx: ...{' '.join(sentences[max(0, k - 2) : k])[-400:]}")
            print(f"   S:   {sentences[k]}")
            print(f"   next: {sentences[k + 1][:200] if k + 1 < len(sentences) else ''}")
    summary = {"kept_length": kept_length, "drops": dict(drops), "ner_needles": dict(labels)}
    print(json.dumps(summary))
    return summary


def why(path: str, min_chars: float | None) -> None:
    from engine.corpus.prepare import CorpusSettings, screen_document
    from engine.corpus.segmentation import document_sentences
    from engine.needles import entities as E
    from engine.needles.edits import scan_order, sentence_bounds

    settings = CorpusSettings(**({} if min_chars is None else {"min_chars_per_sentence": min_chars}))
    reasons: Counter[str] = Counter()
    for doc in load(path):
        if screen_document(doc.user_data["doc_id"], "", doc, settings, year=doc.user_data.get("year"))[1] != "no_ner":
            continue
        entities, disputed = E.document_entity_texts(doc, doc.user_data.get("year")), E.disputed_texts(doc)
        sentences = document_sentences(doc).spans
        print(f"## {doc.user_data['doc_id']}")
        for k in scan_order(len(sentences) // 2, len(sentences), settings.ner_scan_radius):
            sent = sentences[k]
            for ent in (e for e in sent.ents if e.label_ in E.NER_LABELS):
                span = E._without_article(ent)
                label = entities.labels.get(span.text)
                if span.text in disputed:
                    reason = "disputed"
                elif label is None:
                    reason = "no document label: " + _why_no_label(doc, span.text, doc.user_data.get("year"))
                elif not E._fits_label(span, label):
                    reason = "form or syntax"
                elif E.inside_quotes(sent.text.strip(), span.start_char - sentence_bounds(sent)[0]):
                    reason = "quoted"
                elif label in E.PLACE_LABELS and E.place_of(span.text) is None:
                    reason = "place unknown"
                elif label in E.PLACE_LABELS and not E._pool(span, label, sent, entities)[0]:
                    reason = "no same-kind place: " + _why_no_place(span, sent, entities)
                elif label not in E.PLACE_LABELS and not set(entities.names.get(label, ())) - {span.text}:
                    reason = f"no other {label} in the document"
                else:
                    reason = "no replacement (candidates filtered: shape, shared word, article)"
                reasons[f"{ent.label_}: {reason}"] += 1
                print(f"   {k} {ent.label_} {span.text!r}: {reason}")
    print(json.dumps(reasons.most_common()))


def _why_no_place(span, sent, entities) -> str:
    """Why each place of the document is no replacement for `span` (engine.needles.places.same_kind_places's checks)."""
    from engine.needles import entities as E
    from engine.needles import places as P

    place = P.place_of(span.text)
    others = [o for o in map(E._without_article, sent.ents) if o.start != span.start and (o.label_ in E.PLACE_LABELS or P.place_of(o.text))]
    unknown = [o.text for o in others if P.place_of(o.text) is None]
    if unknown:
        return f"another place of the sentence unknown {unknown}"
    around = [one for o in others for one in P.place_of(o.text).each()]
    why = Counter()
    for candidate in sorted({n for k in sorted(E.PLACE_LABELS) for n in entities.names.get(k, ())} - {span.text}):
        reading = P.place_of(candidate)
        if candidate in entities.contained.get(span.text, ()):
            why["document links them"] += 1
        elif reading is None:
            why["unknown"] += 1
        elif reading.kind != place.kind:
            why[f"{reading.kind} for a {place.kind}"] += 1
        elif P.relation(place, reading):
            why[P.relation(place, reading)] += 1
        elif place.kind == "city" and P.near(place, reading):
            why["near"] += 1
        elif place.kind == "city" and P.inside_a_larger_city(reading):
            why["near a larger city"] += 1
        elif place.kind == "region" and not P._same_division(place, reading):
            why["another division"] += 1
        else:
            def stands(one):
                return [(P.relation(one, o), one.kind == o.kind == "city" and P.near(one, o)) for o in around]
            why["stands otherwise to the sentence's places" if stands(reading) != stands(place) else "apposition or nationality"] += 1
    return f"{place.kind}; " + (", ".join(f"{k} {v}" for k, v in why.most_common()) or "no other place in the document")


def _why_no_label(doc, text: str, year) -> str:
    """Which step of engine.needles.entities.document_entity_texts leaves `text` without a label."""
    from engine.needles import entities as E
    from engine.needles.person_evidence import not_a_person, titled_mentions
    from engine.needles.states_then import countries_not_states_then, states_not_yet_admitted

    spans = [E._without_article(ent) for ent in doc.ents]
    counts = E._votes(doc).get(text)
    if not counts:
        return "no vote"
    label, n = counts.most_common(1)[0]
    n += titled_mentions(spans)[text] if label == "PERSON" else 0
    if label not in E.NER_LABELS:
        return f"majority {label}"
    if n < E.LABEL_AGREEMENT * sum(counts.values()):
        return f"votes split {dict(counts)}"
    if label != "DATE" and " " not in text and n < E._support_needed(text, label):
        return f"support {n} < {E._support_needed(text, label)}"
    if label == "PERSON":
        full_names = {s.text for s in spans if s.label_ == "PERSON" and len(s) > 1}
        words = {
            "in_other": {t.lower_ for s in spans if s.label_ not in E.NER_LABELS for t in s},
            "other_texts": {s.text for s in spans if s.label_ not in ("PERSON", "DATE")},
            "places": {s.text for s in spans if s.label_ in ("GPE", "LOC", "NORP") and len(s) == 1},
        }
        if not_a_person(text, " " not in text, full_names, words):
            return "person evidence (not_a_person)"
    places = [s for s in spans if s.label_ in E.PLACE_LABELS]
    if text in countries_not_states_then(doc, places, year) | states_not_yet_admitted(places, year):
        return "not a state then"
    if any(s.text == text and E._contradicted_by_syntax(s, label) for s in spans):
        return "a mention contradicts it (_contradicted_by_syntax)"
    if label != "DATE" and n < E._support_needed(text, label):
        return f"support {n} < {E._support_needed(text, label)} (several words)"
    return "other"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=("parse", "screen", "why"))
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--min-chars", type=float, default=None, help="default: prepare's")
    parser.add_argument("--radius", type=int, default=None)
    parser.add_argument("--show", type=int, default=0)
    args = parser.parse_args()
    if args.command == "parse":
        parse(*args.paths, min_chars=args.min_chars)
    elif args.command == "screen":
        screen(args.paths[0], args.min_chars, args.radius, args.show)
    else:
        why(args.paths[0], args.min_chars)


if __name__ == "__main__":
    main()
