"""Storage: the LMDB store every stage shares, the content-addressed call
cache with its group-commit writer (thread and commit process), moving cache
entries between stores, and the lock that gives a run one owner.
"""

from engine.exports import lazy_exports

__all__ = ['CallCache', 'CommitError', 'ForeignStoreError', 'GroupCommitWriter', 'MAX_UNCOMMITTED', 'RunLocked', 'Store', 'export_records', 'hold_run', 'import_sources', 'is_cacheable']
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Store": "store",
        "ForeignStoreError": "store",
        "CallCache": "call_cache",
        "GroupCommitWriter": "call_cache",
        "CommitError": "call_cache",
        "MAX_UNCOMMITTED": "call_cache",
        "is_cacheable": "call_cache",
        "import_sources": "transfer",
        "export_records": "transfer",
        "hold_run": "run_lock",
        "RunLocked": "run_lock",
    },
)
