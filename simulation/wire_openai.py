"""The fake server's OpenAI Chat Completions dialect, and Azure OpenAI's
variant of it (deployment in the path, `api-version` query, `api-key`
header, its own error bodies and content-filter answers)."""

from __future__ import annotations

from aiohttp import web

from engine.contracts import Message
from simulation.wire import ENCODER, Call, Reject, WireDialect, check_number, max_tokens, message_text, now_s, usage_numbers


class ChatCompletionsWire(WireDialect):
    provider = "openai"

    def routes(self) -> tuple[str, ...]:
        return ("/v1/chat/completions",)

    def model(self, request: web.Request, body: dict) -> str:
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise Reject(400, "invalid_request_error", "you must provide a model parameter", param="model")
        return model

    def validate(self, request: web.Request, body: dict) -> Call:
        model = self.model(request, body)
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise Reject(400, "invalid_request_error", "'messages' must be a non-empty array", param="messages")
        parsed = []
        for index, m in enumerate(messages):
            if not isinstance(m, dict) or m.get("role") not in ("system", "developer", "user", "assistant"):
                raise Reject(400, "invalid_request_error", f"Invalid value for 'messages[{index}].role'.", param=f"messages[{index}].role")
            role = "system" if m["role"] == "developer" else m["role"]
            parsed.append(Message(role, message_text(m.get("content"), f"messages[{index}]", self)))
        check_number(body, "temperature", 0, 2, self)
        check_number(body, "top_p", 0, 1, self)
        tokens = max_tokens(body, ("max_completion_tokens", "max_tokens"), self, 4096)
        fmt = body.get("response_format")
        wants_json = isinstance(fmt, dict) and fmt.get("type") in ("json_object", "json_schema")
        structured = body.get("structured_outputs")
        guided = body.get("guided_regex")
        if isinstance(structured, dict):
            guided = structured.get("regex", guided)
            wants_json = wants_json or "json" in structured
        wants_json = wants_json or "guided_json" in body
        return Call(provider=self.provider, model=model, messages=tuple(parsed), max_tokens=tokens,
                    wants_json=wants_json, guided_regex=guided if isinstance(guided, str) else None, seed=body.get("seed"))

    def prompt_filter(self) -> Reject | None:
        return Reject(400, "content_filter", "The response was filtered due to the prompt triggering the content management policy.",
                      innererror={"code": "ResponsibleAIPolicyViolation", "content_filter_result": {"hate": {"filtered": True, "severity": "high"}}})

    def success_body(self, call: Call, text: str, finish: str, cached: int, salt: int) -> bytes:
        prompt, completion, reads, _ = usage_numbers(call, text, cached)
        return ENCODER.encode({
            "id": f"chatcmpl-fake{salt}",
            "object": "chat.completion",
            "created": now_s(),
            "model": call.model,
            "system_fingerprint": "fp_fake",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": None},
                         "logprobs": None, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                      "prompt_tokens_details": {"cached_tokens": reads},
                      "completion_tokens_details": {"reasoning_tokens": 0}},
        })

    def filtered_body(self, call: Call, *, prompt_blocked: bool) -> bytes:
        prompt, _, _, _ = usage_numbers(call, "", 0)
        return ENCODER.encode({
            "id": "chatcmpl-filtered", "object": "chat.completion", "created": now_s(), "model": call.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": None}, "finish_reason": "content_filter",
                         "content_filter_results": {"violence": {"filtered": True, "severity": "medium"}}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": 0, "total_tokens": prompt},
        })


class AzureWire(ChatCompletionsWire):
    provider = "azure"
    auth_kind = "401"
    rate_limit_kind = "429"

    def routes(self) -> tuple[str, ...]:
        return ("/openai/deployments/{deployment}/chat/completions",)

    def model(self, request: web.Request, body: dict) -> str:
        if not request.query.get("api-version"):
            raise Reject(404, "404", "Resource not found")
        return request.match_info["deployment"]

    def key(self, request: web.Request) -> str:
        return request.headers.get("api-key", "") or request.headers.get("Authorization", "").removeprefix("Bearer ")

    def not_found(self, model: str) -> Reject:
        return Reject(404, "DeploymentNotFound", "The API deployment for this resource does not exist.")

    def error_body(self, reject: Reject) -> bytes:
        if reject.kind != "content_filter":
            return ENCODER.encode({"error": {"code": reject.kind, "message": reject.message}})
        return super().error_body(reject)
