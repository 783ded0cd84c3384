"""A run: the design (cells, items, calls), the scheduler (cell policy, workers,
dispatcher, ordered output), judge health, resume, result rows and exports, the
dry run's plan, and the runner that wires them; `engine.run.batch` is the batch
mode that replaces a judge's workers by waves over the same cells.
"""

from engine.exports import lazy_exports

__all__ = ['Cell', 'Design', 'Experiment', 'FailurePolicy', 'Item', 'PlanReport', 'RunAborted', 'RunStopped', 'RunSummary', 'arun_experiment', 'iter_failures', 'iter_rows', 'plan_experiment', 'run_experiment', 'run_id_for']
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "run_experiment": "runner",
        "arun_experiment": "runner",
        "RunStopped": "runner",
        "plan_experiment": "plan",
        "PlanReport": "plan",
        "Experiment": "experiment",
        "Design": "design",
        "Cell": "design",
        "Item": "design",
        "RunSummary": "summary",
        "iter_rows": "results",
        "iter_failures": "results",
        "run_id_for": "results",
        "RunAborted": "judge_health",
        "FailurePolicy": "judge_health",
    },
)
