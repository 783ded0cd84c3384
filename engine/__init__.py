"""needlejudge engine: config, corpus, needles, design, prompts, cache, scheduler, stopping, results, CLI."""

__version__ = "0.1.0"
