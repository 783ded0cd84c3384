"""Human labels for a finished run: a stratified sample of its items, an
append-only label log that survives a crash, and the local web page
(`needlejudge label`) on which people rate the pairs the judges rated."""

from engine.exports import lazy_exports

__all__ = ["LabelItem", "LabelLog", "LabelRecord", "draw_sample"]
__getattr__, __dir__ = lazy_exports(
    __name__,
    {"LabelItem": "sample", "draw_sample": "sample", "LabelLog": "log", "LabelRecord": "log"},
)
