"""An independent OpenAI-compatible judge server for the dispatch benchmark.

Not our fake server: a minimal Starlette app served by uvicorn (the stack
vLLM's own server runs on), answering every chat completion with a JSON
score, `{"score": N}`, N a hash of the request body (so the same request
gets the same answer). With `--record FILE` it appends every request body
it receives (one JSON document a line) so that the baselines can post
exactly the bodies the engine sent.

    python benchmarks/json_judge_server.py --port 8123 [--record bodies.jsonl]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


def build_app(record: str | None) -> Starlette:
    sink = open(record, "ab") if record else None  # noqa: SIM115 (lives as long as the server)
    served = {"requests": 0}

    async def completions(request: Request) -> Response:
        body = await request.body()
        served["requests"] += 1
        if sink is not None:
            sink.write(body.replace(b"\n", b" ") + b"\n")
            sink.flush()
        payload = json.loads(body)
        score = int.from_bytes(hashlib.blake2b(body, digest_size=4).digest(), "little") % 101
        prompt_tokens = sum(len(m.get("content", "")) for m in payload.get("messages", ())) // 4
        return JSONResponse(
            {
                "id": f"chatcmpl-{served['requests']}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": payload.get("model", "judge"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": json.dumps({"score": score})},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 6, "total_tokens": prompt_tokens + 6},
            }
        )

    async def stats(request: Request) -> Response:
        return JSONResponse(served)

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"]), Route("/stats", stats)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--record", default=None, help="append every request body to this file")
    args = parser.parse_args()
    # keep-alive 60 s, not uvicorn's 5 s: on a busy box a client's pooled connection
    # can sit idle past 5 s and race the server's close (the SDK has no retry here)
    uvicorn.run(build_app(args.record), host="127.0.0.1", port=args.port, log_level="warning", access_log=False, timeout_keep_alive=60)


if __name__ == "__main__":
    main()
