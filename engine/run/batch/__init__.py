"""The batch mode of a run (`mode = "batch"`): waves planned from each live
cell's stopping rule, submitted through the provider's batch API, recorded in the
store before they are waited on, and answered into the same cache and output stage.
"""

from engine.exports import lazy_exports

__all__ = ['BatchCalls', 'BatchJudge', 'BatchRecord', 'estimate_waves', 'pending_batches', 'wave_size']
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "BatchJudge": "judge",
        "BatchCalls": "calls",
        "wave_size": "wave_planner",
        "estimate_waves": "wave_planner",
        "pending_batches": "store",
        "BatchRecord": "store",
    },
)
