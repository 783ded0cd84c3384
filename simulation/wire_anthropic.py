"""The fake server's Anthropic Messages dialect (`x-api-key`,
`anthropic-version`, top-level `system`, `cache_control` prefixes, 529
overloaded, `anthropic-ratelimit-*` headers)."""

from __future__ import annotations

import time
from datetime import datetime, timezone

from aiohttp import web

from engine.contracts import Message
from simulation.wire import ENCODER, Budget, Call, Reject, WireDialect, check_number, max_tokens, message_text, usage_numbers


class MessagesWire(WireDialect):
    provider = "anthropic"
    auth_kind = "authentication_error"
    not_found_kind = "not_found_error"
    rate_limit_kind = "rate_limit_error"
    overloaded_status = 529
    kinds_by_status = {401: "authentication_error", 403: "permission_error", 404: "not_found_error", 413: "request_too_large"}

    def routes(self) -> tuple[str, ...]:
        return ("/v1/messages",)

    def validate(self, request: web.Request, body: dict) -> Call:
        if not request.headers.get("anthropic-version"):
            raise Reject(400, "invalid_request_error", "anthropic-version: header is required")
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise Reject(400, "invalid_request_error", "model: Field required")
        tokens = max_tokens(body, ("max_tokens",), self, None)
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise Reject(400, "invalid_request_error", "messages: at least one message is required")
        parsed = []
        cached = 0
        system = body.get("system")
        if system is not None:
            if isinstance(system, list) and any(isinstance(b, dict) and b.get("cache_control") for b in system):
                cached = sum(len(b.get("text", "")) for b in system if isinstance(b, dict))
            parsed.append(Message("system", message_text(system, "system", self)))
        for index, m in enumerate(messages):
            if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
                raise Reject(400, "invalid_request_error", f"messages.{index}.role: Input should be 'user' or 'assistant'")
            parsed.append(Message(m["role"], message_text(m.get("content"), f"messages.{index}", self)))
        check_number(body, "temperature", 0, 1, self)
        check_number(body, "top_p", 0, 1, self)
        return Call(provider=self.provider, model=model, messages=tuple(parsed), max_tokens=tokens, anthropic_cached_prefix=cached)

    def key(self, request: web.Request) -> str:
        return request.headers.get("x-api-key", "") or request.headers.get("Authorization", "").removeprefix("Bearer ")

    def server_kind(self, status: int) -> str:
        return "overloaded_error" if status == 529 else "api_error"

    def error_body(self, reject: Reject) -> bytes:
        return ENCODER.encode({"type": "error", "error": {"type": reject.kind, "message": reject.message}, "request_id": "req_fake"})

    def budget_headers(self, budget: Budget) -> dict[str, str]:
        reset = datetime.fromtimestamp(time.time() + budget.full_in_s, tz=timezone.utc).isoformat().replace("+00:00", "Z")
        return {"anthropic-ratelimit-requests-limit": str(budget.limit),
                "anthropic-ratelimit-requests-remaining": str(budget.remaining),
                "anthropic-ratelimit-requests-reset": reset}

    def success_body(self, call: Call, text: str, finish: str, cached: int, salt: int) -> bytes:
        prompt, completion, reads, writes = usage_numbers(call, text, cached)
        return ENCODER.encode({
            "id": f"msg_fake{salt}",
            "type": "message",
            "role": "assistant",
            "model": call.model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "max_tokens" if finish == "length" else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": prompt - reads - writes if prompt > reads + writes else 1, "output_tokens": completion,
                      "cache_creation_input_tokens": writes, "cache_read_input_tokens": reads},
        })

    def filtered_body(self, call: Call, *, prompt_blocked: bool) -> bytes:
        prompt, _, _, _ = usage_numbers(call, "", 0)
        return ENCODER.encode({
            "id": "msg_refusal", "type": "message", "role": "assistant", "model": call.model, "content": [],
            "stop_reason": "refusal", "stop_sequence": None, "usage": {"input_tokens": prompt, "output_tokens": 0},
        })
