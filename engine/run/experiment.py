"""The opened parts of an experiment: its store, prepared corpus, prompts,
design and run id (what `needlejudge run` and its dry run both need)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from engine.config import ExperimentConfig
from engine.contracts import ConfigError, Prompt
from engine.run.design import Design
from engine.run.results import run_id_for
from engine.cache.store import Store


class Experiment:
    """The opened parts of an experiment (store, corpus, prompts, design)."""

    def __init__(self, config: ExperimentConfig, *, prepare_progress: bool = False) -> None:
        from engine.corpus.pairs import Corpus, document_order
        from engine.corpus.prepare import prepare_corpus
        from engine.prompts import load_prompt

        self.config = config
        self.store = Store(config.store)
        try:
            self.corpus_summary = prepare_corpus(
                [Path(p) for p in config.corpus.inputs], self.store, config.corpus.settings, progress=prepare_progress
            )
            self.corpus = Corpus.open(self.store)
            names = sorted({name for judge in config.judges for name in config.judge_prompts(judge)})
            self.prompts: dict[str, Prompt] = {}
            for name in names:
                try:
                    self.prompts[name] = load_prompt(name)
                except ConfigError as exc:
                    raise ConfigError(f"{config.source or '<config>'}: prompts: {exc}") from None
            self.prompt_versions = {name: prompt.version for name, prompt in self.prompts.items()}
            self.design = Design(config, self.corpus, self.prompts, document_order=document_order)
            self.run_id = run_id_for(self.identity())
        except BaseException:
            self.store.close()
            raise

    def identity(self) -> dict[str, Any]:
        """Everything that can change the results, and nothing else."""
        c = self.config
        return {
            "schema": "needlejudge-run-v1",
            "corpus": self.corpus_summary.fingerprint,
            "seed": c.seed,
            "needles": list(c.needles),
            "hays": list(c.hays),
            "positions": [list(p) for p in c.position_list()],
            "replicates": c.replicates,
            "stopping": msgspec.to_builtins(c.stopping),
            "checks": msgspec.to_builtins(c.checks),
            "check_position": list(c.check_position()),
            "judges": [
                {
                    "name": j.name,
                    "adapter": j.adapter,
                    "model": j.model,
                    "revision": j.revision,
                    "options": j.options,
                    "prompts": [[p, self.prompts[p].id, self.prompt_versions[p]] for p in c.judge_prompts(j)],
                }
                for j in c.judges
            ],
        }

    def close(self) -> None:
        self.store.close()
