"""needlejudge engine, one subpackage per stage (ARCHITECTURE.md "Stages"):
needles -> corpus -> prompts -> run (with its batch mode), over the cache and
the stopping rules; contracts, config and the adapter registry beside them.

The Python entry points: `load_config(path)`, `run_experiment(config)`,
`arun_experiment(config)` and `plan_experiment(config)` (engine.run.runner).
"""

from engine.exports import lazy_exports

__version__ = "0.1.0"

__all__ = ["arun_experiment", "load_config", "plan_experiment", "run_experiment"]
__getattr__, __dir__ = lazy_exports(
    __name__,
    {"load_config": "config", "run_experiment": "run.runner", "arun_experiment": "run.runner", "plan_experiment": "run.runner"},
)
