"""The needle rules: pure functions over one parsed sentence (spaCy `Span`)
that say how to perturb it (neg, con, ner) or refuse, and the item oracle that
checks a rendered pair by its text alone. No store, no corpus, no I/O.
"""

from engine.exports import lazy_exports

__all__ = ['EntityOption', 'TextEdit', 'apply_entity', 'check_pair', 'check_sentence', 'check_window', 'disputed_texts', 'document_entity_texts', 'entity_options', 'find_needle_sentence', 'has_negation', 'negate', 'scan_order', 'swap_conjunction']
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "TextEdit": "edits",
        "EntityOption": "edits",
        "apply_entity": "edits",
        "find_needle_sentence": "edits",
        "scan_order": "edits",
        "negate": "negation",
        "has_negation": "negation",
        "swap_conjunction": "conjunctions",
        "entity_options": "entities",
        "document_entity_texts": "entities",
        "disputed_texts": "entities",
        "check_pair": "oracle",
        "check_window": "oracle",
        "check_sentence": "oracle",
    },
)
