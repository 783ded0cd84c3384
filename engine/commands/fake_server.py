"""`needlejudge fake-server`: the local fake provider server (OpenAI, Azure,
Anthropic and Gemini wire formats, simulated judges, rate limits, faults)."""

from __future__ import annotations

import argparse
import asyncio

from engine.contracts import ConfigError

HELP = "Run the fake provider server on 127.0.0.1 (simulated judges, rate limits, fault injection)."


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (0: any free port; default 8000)")
    parser.add_argument(
        "--latency",
        default="zero",
        help="latency distribution: zero | fixed:S | uniform:LOW,HIGH | lognormal:MEDIAN,SIGMA (seconds)",
    )
    parser.add_argument("--rpm", type=float, default=None, help="requests per minute per model before 429 (default: unlimited)")
    parser.add_argument("--rpm-burst", type=float, default=None, help="rate-limit bucket size (default: one second's worth)")
    parser.add_argument(
        "--capacity",
        type=float,
        default=None,
        metavar="C",
        help="simulate a GPU replica: serve at most C calls/s, each call waiting behind the batch already queued "
        "(latency about batch/C, plus --latency); default: unlimited",
    )
    parser.add_argument("--judges", default=None, metavar="FILE", help="JSON/TOML file: model id -> simulated-judge parameters")
    parser.add_argument(
        "--store",
        default=None,
        metavar="STORE",
        help="a prepared store: the simulated judges then recover each item (document, needle, position, hay) "
        "exactly from the texts they are shown; without it they guess from the texts",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of injected faults and latencies")
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="KIND:RATE",
        help="inject a fault kind at a rate, e.g. server_error:0.05 (repeatable); kinds: server_error, overloaded, "
        "rate_limit, rate_limit_bare, hang, reset, truncated, malformed, content_filter, prompt_filter, unparseable, bad_request",
    )


    batch = parser.add_argument_group("batch APIs", "the simulated OpenAI / Anthropic / Gemini batch endpoints")
    batch.add_argument("--batch-delay", type=float, default=0.0, metavar="S", help="a batch ends S seconds after its creation (default 0)")
    batch.add_argument("--batch-expire-after", type=float, default=None, metavar="S",
                       help="a batch expires S seconds after creation (S < --batch-delay) with only the first S/delay of its entries done")
    batch.add_argument("--batch-failure-rate", type=float, default=0.0, metavar="F",
                       help="fraction of batch entries that fail (chosen by custom_id hash) with the provider's error body")
    batch.add_argument("--batch-failure-status", type=int, default=500, metavar="N", help="HTTP status of those failed entries (default 500)")
    batch.add_argument("--batch-fail", type=int, action="append", default=[], metavar="N",
                       help="reject the N-th batch created (0-based) whole, as a failed batch (repeatable)")


def parse_latency(text: str) -> dict:
    kind, _, values = text.partition(":")
    try:
        numbers = [float(v) for v in values.split(",")] if values else []
    except ValueError:
        raise ConfigError(f"--latency {text!r}: expected numbers after the colon") from None
    shapes = {"zero": 0, "fixed": 1, "uniform": 2, "lognormal": 2}
    if kind not in shapes or len(numbers) != shapes[kind]:
        raise ConfigError(f"--latency {text!r}: expected zero, fixed:S, uniform:LOW,HIGH or lognormal:MEDIAN,SIGMA")
    if kind == "fixed":
        return {"kind": kind, "value_s": numbers[0]}
    if kind == "uniform":
        return {"kind": kind, "low_s": numbers[0], "high_s": numbers[1]}
    if kind == "lognormal":
        return {"kind": kind, "median_s": numbers[0], "sigma": numbers[1]}
    return {"kind": "zero"}


def build_config(args: argparse.Namespace):
    import msgspec

    from simulation.fake_config import FakeConfig, load_judges

    faults = []
    for spec in args.fault:
        kind, _, rate = spec.partition(":")
        try:
            faults.append({"kind": kind, "rate": float(rate or 1.0)})
        except ValueError:
            raise ConfigError(f"--fault {spec!r}: expected KIND:RATE with RATE a probability") from None
    raw = {"seed": args.seed, "latency": parse_latency(args.latency), "rpm": args.rpm, "rpm_burst": args.rpm_burst, "faults": faults,
           "capacity": args.capacity,
           "batch": {"delay_s": args.batch_delay, "expire_after_s": args.batch_expire_after, "failure_rate": args.batch_failure_rate,
                     "failure_status": args.batch_failure_status, "fail_batches": args.batch_fail}}
    if args.judges:
        raw["judges"] = msgspec.to_builtins(load_judges(args.judges))
    try:
        return msgspec.convert(raw, FakeConfig)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"fake-server: bad setting: {exc}") from None


def load_items(store_path: str):  # type: ignore[no-untyped-def]
    """The item index of the corpus prepared in `store_path` (the store is closed after reading)."""
    from engine.corpus.pairs import Corpus
    from engine.cache.store import Store
    from simulation.items import ItemIndex

    with Store(store_path, readonly=True) as store:
        Corpus.open(store)  # a clear error when nothing is prepared there
        return ItemIndex.from_store(store)


def main(args: argparse.Namespace) -> int:
    from simulation.fake_server import serve

    config = build_config(args)
    items = load_items(args.store) if args.store else None

    async def run() -> None:
        async with serve(config, items=items, port=args.port) as server:
            print(f"fake provider server listening on {server.url}", flush=True)
            await asyncio.Event().wait()

    try:
        import uvloop

        uvloop.run(run())
    except ImportError:
        asyncio.run(run())
    return 0
