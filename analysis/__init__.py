"""Statistics, instrument checks, figures and the report, over exported results."""
