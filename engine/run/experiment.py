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
        from engine.run.panel import check_panels
        from engine.prompts import load_prompt

        self.config = config
        self.store = Store(config.store)
        try:
            # prompts and panels first: a bad one is an error before any corpus work
            names = sorted({name for judge in config.judges for name in config.judge_prompts(judge)}
                           | ({config.tournament.prompt_name} if config.tournament is not None else set()))  # fmt: skip
            self.prompts: dict[str, Prompt] = {}
            for name in names:
                try:
                    self.prompts[name] = load_prompt(name)
                except ConfigError as exc:
                    raise ConfigError(f"{config.source or '<config>'}: prompts: {exc}") from None
            self.prompt_versions = {name: prompt.version for name, prompt in self.prompts.items()}
            check_panels(config, self.prompts)
            check_tournament_prompt(config, self.prompts)
            check_prefix_gates(config)
            self.corpus_summary = prepare_corpus(
                [Path(p) for p in config.corpus.inputs], self.store, config.corpus.settings, progress=prepare_progress
            )
            self.corpus = Corpus.open(self.store)
            check_positions(config, self.corpus)
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
            # only when balanced: "all" is how every run drew its documents before the setting,
            # so those run ids stay as they were
            **({"cell_documents": c.cell_documents} if c.cell_documents != "all" else {}),
            # only with a tournament, so every other run id stays as it was
            **({"tournament": msgspec.to_builtins(c.tournament)} if c.tournament is not None else {}),
            "judges": [
                {
                    "name": j.name,
                    "adapter": j.adapter,
                    "model": j.model,
                    "revision": j.revision,
                    "options": j.options,
                    "prompts": [[p, self.prompts[p].id, self.prompt_versions[p]] for p in c.judge_prompts(j)],
                    # only for panels, so every other judge's run id stays as it was
                    **({"panel": msgspec.to_builtins(j.panel)} if j.panel is not None else {}),
                    **({"alone": False} if not j.alone else {}),
                }
                for j in c.judges
            ],
        }

    def panels_manifest(self) -> dict[str, Any]:
        """Each panel's members as raters (judge, prompt id, version) and its settings."""
        return {name: panel.manifest() for name, panel in self.design.panels.items()}
    def design_fingerprint(self) -> str:
        """The identity of the cells and their documents, whatever the judges
        (named in exported waves beside the run id: adapters/batch_files.py)."""
        return run_id_for({key: value for key, value in self.identity().items() if key != "judges"})

    def close(self) -> None:
        self.store.close()


def check_positions(config: ExperimentConfig, corpus: Any) -> None:
    """Refuse positions no document of the corpus can hold (issue 33: [200, 200]
    was accepted, its cells ended `exhausted` with 0 rows, exit 0, no word).
    A position (i, j) needs i + j + 1 sentences: the needle's and i before, j after."""
    longest = corpus.documents.longest()
    tournament = config.tournament
    for key, positions in (("`positions`" if config.positions is not None else "`k`", config.position_list()),
                           ("`tournament.positions`", tournament.positions if tournament is not None else ())):  # fmt: skip
        _check_held(config, key, positions, longest)


def _check_held(config: ExperimentConfig, key: str, positions: Any, longest: int) -> None:
    unheld = [[i, j] for i, j in positions if i + j + 1 > longest]
    if unheld:
        shown = ", ".join(map(str, unheld[:10])) + (f" and {len(unheld) - 10} more" if len(unheld) > 10 else "")
        raise ConfigError(
            f"{config.source or '<config>'}: {key}: {len(unheld)} position(s) fit no document of the corpus: {shown}; its "
            f"longest document has {longest} sentences and a position [i, j] needs i + j + 1. Remove them, or prepare a "
            "corpus with longer documents"
        )


def check_prefix_gates(config: ExperimentConfig) -> None:
    """`prefix_gate = true` only where the gate can act: a judge's own
    synchronous calls to a backend that caches prompt prefixes. Refused, not
    ignored, elsewhere: the key changes no result, so a silent no-op would only
    let a user believe (and report) that the gate ran."""
    from engine.registry import capabilities

    for n, judge in enumerate(config.judges):
        if not judge.prefix_gate:
            continue
        at = f"{config.source or '<config>'}: `judges[{n}]` ({judge.name!r}): `prefix_gate = true`"
        if judge.panel is not None:
            raise ConfigError(f"{at}: a panel makes no calls of its own; set it on the members that answer alone")
        if not judge.alone:
            raise ConfigError(f"{at}: with `alone = false` the judge answers only inside its panels, whose calls are not held; remove it")
        if judge.mode == "batch":
            raise ConfigError(f"{at}: a batch judge sends its calls in waves, nothing to hold back; remove it or use mode = \"sync\"")
        if not capabilities(judge.spec()).prompt_caching:
            raise ConfigError(f"{at}: adapter {judge.adapter!r} caches no prompt prefixes, so holding calls back gains nothing; "
                              "remove it (it is for vllm, openai-compatible servers and other prefix-caching backends)")


def check_tournament_prompt(config: ExperimentConfig, prompts: dict[str, Prompt]) -> None:
    """The tournament's prompt is pairwise, and the built-in one fits its layout:
    one original with two edits (needles), or two (original, edit) pairs."""
    tournament = config.tournament
    if tournament is None:
        return
    name = tournament.prompt_name
    at = f"{config.source or '<config>'}: `tournament.prompt`"
    definition = getattr(prompts[name], "definition", None)
    if definition is not None and definition.kind != "pairwise":
        raise ConfigError(f"{at}: {name!r} is not a pairwise prompt (kind = \"pairwise\"); the built-in ones are \"closer\" and \"closer_pairs\"")
    wanted = "closer" if tournament.kind == "needles" else "closer_pairs"
    if name in ("closer", "closer_pairs") and name != wanted:
        layout = "one original and two edits of it" if tournament.kind == "needles" else "two edits, each with its own original"
        raise ConfigError(f"{at}: {name!r} does not fit a tournament of {tournament.kind} ({layout}); use {wanted!r}")
