"""CLI subcommands, one module each: `configure(parser)` and `main(args) -> int`."""
