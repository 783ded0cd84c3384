"""The engine benchmarks, one module per benchmark; run them with benchmarks/bench_engine.py."""
