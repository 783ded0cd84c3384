"""Stand-ins for providers and models, for tests, benchmarks and the
quickstart: the fake provider server, the simulated judge and the tiny Gemma
builder. Nothing in `engine` or `adapters` imports this package."""
