"""`needlejudge` command line: a thin dispatcher over engine.commands.*.

Each subcommand lives in its own module exposing `HELP`, `configure(parser)`
and `main(args) -> int`, imported only when that subcommand runs so that
`needlejudge prepare` never imports aiohttp or vLLM. A command module imports
nothing heavy at its top: `--help` and argument errors load no more than
argparse (tests/test_cli.py), and a command loads its heavy modules
(spaCy, numpy, aiohttp, matplotlib, vLLM) only once its input is checked.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from engine import __version__

# subcommand -> (module under engine.commands, one-line summary for --help)
COMMANDS: dict[str, tuple[str, str]] = {
    "quickstart": ("quickstart", "the bundled demo end to end: prepare, run, report (no key, no network)"),
    "prepare": ("prepare", "clean, parse and screen a corpus into a store (once)"),
    "pairs": ("pairs", "print needle/hay document pairs as JSON Lines"),
    "run": ("run", "run an experiment config (resumes; a finished run makes no calls)"),
    "label": ("label", "a local page for people to label a sample of a run's pairs"),
    "report": ("report", "analyse a run folder: instrument checks, statistics, figures, HTML"),
    "cache": ("cache", "call cache: stats, export, verify"),
    "calls": ("calls", "a run's next wave of calls out as OpenAI batch files, and their answers back in"),
    "fake-server": ("fake_server", "a local fake provider server with simulated judges"),
    "vllm-server": ("vllm_server", "serve a config's vllm judge as an OpenAI-compatible server on 127.0.0.1"),
}


def build_parser(argv: list[str]) -> tuple[argparse.ArgumentParser, object | None]:
    parser = argparse.ArgumentParser(prog="needlejudge", description="LLM-as-a-judge experiments at high throughput.")
    parser.add_argument("--version", action="version", version=f"needlejudge {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = next((a for a in argv if not a.startswith("-")), None)
    module = None
    for name, (mod_name, summary) in COMMANDS.items():
        if name == wanted:
            module = importlib.import_module(f"engine.commands.{mod_name}")
            p = sub.add_parser(name, help=getattr(module, "HELP", None), description=getattr(module, "HELP", None))
            module.configure(p)
        else:
            sub.add_parser(name, help=summary)
    return parser, module


def main(argv: list[str] | None = None) -> int:
    whole_process = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    parser, module = build_parser(argv)
    args = parser.parse_args(argv)
    # main() reading sys.argv is the process's own command line (the console
    # script, `python -m engine.cli`): a command may then tune process-wide
    # settings (`run`: the cyclic GC). Called with argv (tests, embedding code), never.
    args.whole_process = whole_process
    if module is None:
        parser.print_help()
        return 2
    from engine.contracts import ConfigError  # not before: help and argument errors need no msgspec

    try:
        return int(module.main(args) or 0)
    except BaseException as exc:
        # A task group (the run's, its progress display's) wraps what its
        # tasks raised in an exception group: made only of errors we explain,
        # it ends in their one line; anything else keeps its traceback.
        leaves = exception_leaves(exc)
        if not all(isinstance(leaf, (ConfigError, KeyboardInterrupt)) for leaf in leaves):
            raise
        error = next((leaf for leaf in leaves if isinstance(leaf, ConfigError)), None)
        if error is None:
            print(f"needlejudge {args.command}: interrupted; everything committed so far is kept", file=sys.stderr)
            return 130
        print(f"needlejudge {args.command}: error: {error}", file=sys.stderr)
        return int(getattr(error, "exit_code", 2))  # 2: bad input, config or store; 3: a judge failed


def exception_leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside `exc`'s (nested) exception groups; `exc` itself when it is none."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in exception_leaves(inner)]
    return [exc]


if __name__ == "__main__":
    sys.exit(main())
