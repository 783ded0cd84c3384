"""Helpers shared by the needle rule tests: parse a text, apply a rule."""

from __future__ import annotations


def first_sentence(nlp, text):
    return next(iter(nlp(text).sents))


def edited(nlp, rule, text):
    """The first sentence of `text` after `rule`'s edit, or None when the rule refuses it."""
    sent = first_sentence(nlp, text)
    edit = rule(sent)
    return None if edit is None else edit.apply(sent.text.strip())


class ParsedOnce:
    """A spaCy pipeline that parses each distinct text once per test session:
    the gold-set tests re-parse the same ~400 bundled articles with sm, md
    and both (agreement), ~7 minutes of CI. Every `pipe` gets fresh Docs
    (deserialised from the first parse), so what one test's code writes on
    a Doc (the second model's entities, for one) never reaches another.
    With `shared` (the conftest's shared_parses_root), the parses are also
    shared with the other test files and workers of the run (tests/shared_parses.py)."""

    # components a caller may skip (AgreedParser skips the second model's): they
    # only add annotations no later component reads, so a full parse serves
    ANNOTATION_ONLY = frozenset({"lemmatizer"})

    def __init__(self, nlp, shared=None) -> None:
        from shared_parses import SharedParses

        self.nlp = nlp
        self._parsed: dict[str, bytes] = {}
        self._shared = None if shared is None else SharedParses(shared, nlp)

    def __getattr__(self, name):  # pipe_names, meta, vocab...: the pipeline's own
        return getattr(self.nlp, name)

    def __call__(self, text):
        return next(self.pipe([text]))

    def pipe(self, texts, *, as_tuples=False, batch_size=32, n_process=1, disable=()):
        from spacy.tokens import Doc

        assert set(disable) <= self.ANNOTATION_ONLY, f"ParsedOnce parses with every component: cannot skip {disable}"
        items = list(texts)
        plain = [item[0] for item in items] if as_tuples else items
        missing = list(dict.fromkeys(t for t in plain if t not in self._parsed))
        if self._shared is not None:
            self._parsed.update(self._shared.parse(missing, batch_size=batch_size, n_process=n_process))
        else:
            for text, doc in zip(missing, self.nlp.pipe(missing, batch_size=batch_size, n_process=n_process)):
                self._parsed[text] = doc.to_bytes()
        for item, text in zip(items, plain):
            doc = Doc(self.nlp.vocab).from_bytes(self._parsed[text])
            yield (doc, item[1]) if as_tuples else doc


def any_shape_swap(sent, **kwargs):
    """The con rule with `con_shapes = "any"`: the phrase-level rules the tests
    of their refusal classes exercise (the default, "safe", refuses every
    phrase-level shape before those rules matter: tests/test_coordination_shape.py)."""
    from engine.needles.conjunctions import swap_conjunction

    return swap_conjunction(sent, shapes="any", **kwargs)


def con_refusal(nlp, text, shapes="any"):
    """(whether the con rule refuses the first sentence of `text`, the set of
    reasons it gives for its conjunctions); `shapes` as in any_shape_swap."""
    from engine.needles.conjunctions import conjunction_refusals, swap_conjunction

    sent = first_sentence(nlp, text)
    return swap_conjunction(sent, shapes=shapes) is None, {reason for _token, reason in conjunction_refusals(sent, shapes=shapes)}


def sentence_entity_options(nlp, document):
    """{sentence text: {entity text: its replacements}} for each sentence of a parsed document of our own."""
    from engine.needles.entities import document_entity_texts, entity_options

    doc = nlp(document)
    entities = document_entity_texts(doc)
    return {s.text.strip(): {o.text: o.replacements for o in entity_options(s, entities)} for s in doc.sents}


def offered_replacements(options) -> set[str]:
    """Every replacement that `sentence_entity_options`'s result offers, in any sentence."""
    return {r for sentence in options.values() for rs in sentence.values() for r in rs}


def before_parser(nlp, text: str):
    """`text` through the components before the parser: the tagger's output
    and the sentence starts the guards set, as the parser will see them."""
    doc = nlp.make_doc(text)
    for name, component in nlp.pipeline:
        if name == "parser":
            break
        doc = component(doc)
    return doc
