"""One module per judge backend behind the `engine.contracts.Adapter` protocol."""
