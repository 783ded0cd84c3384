"""The fake server's Gemini `generateContent` dialect (`x-goog-api-key` or
`?key=`, `systemInstruction`, role `model`, google.rpc error bodies with
RetryInfo instead of retry headers, prompt and candidate safety blocks)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from engine.contracts import Message
from simulation.wire import ENCODER, RATE_LIMIT_MESSAGE, Budget, Call, Reject, WireDialect, check_number, max_tokens, usage_numbers


class GenerateContentWire(WireDialect):
    provider = "gemini"
    bad_request_kind = "INVALID_ARGUMENT"
    auth_kind = "UNAUTHENTICATED"
    not_found_kind = "NOT_FOUND"
    kinds_by_status = {401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND"}

    def routes(self) -> tuple[str, ...]:
        return ("/{version}/models/{target}",)

    def validate(self, request: web.Request, body: dict) -> Call:
        target = request.match_info["target"]
        if not target.endswith(":generateContent"):
            raise Reject(404, "NOT_FOUND", f"method not found: {request.path}")
        contents = body.get("contents")
        if not isinstance(contents, list) or not contents:
            raise Reject(400, "INVALID_ARGUMENT", "* GenerateContentRequest.contents: contents is not specified")
        parsed = []
        system = body.get("systemInstruction") or body.get("system_instruction")
        if system is not None:
            parsed.append(Message("system", _text(system, "systemInstruction")))
        for index, content in enumerate(contents):
            role = content.get("role", "user") if isinstance(content, dict) else None
            if role not in ("user", "model"):
                raise Reject(400, "INVALID_ARGUMENT", f"* GenerateContentRequest.contents[{index}].role: Please use a valid role: user, model.")
            parsed.append(Message("assistant" if role == "model" else "user", _text(content, f"contents[{index}]")))
        config = body.get("generationConfig") or {}
        if not isinstance(config, dict):
            raise Reject(400, "INVALID_ARGUMENT", "generationConfig must be an object")
        check_number(config, "temperature", 0, 2, self)
        check_number(config, "topP", 0, 1, self)
        tokens = max_tokens(config, ("maxOutputTokens",), self, 8192)
        wants_json = config.get("responseMimeType") == "application/json"
        return Call(provider=self.provider, model=target.removesuffix(":generateContent"), messages=tuple(parsed),
                    max_tokens=tokens, wants_json=wants_json, seed=config.get("seed"))

    def key(self, request: web.Request) -> str:
        return request.headers.get("x-goog-api-key", "") or request.query.get("key", "")

    def missing_key(self) -> Reject:
        return Reject(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers. Please use an API key.")

    def invalid_key(self) -> Reject:
        return Reject(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.",
                      details=[{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"}])

    def server_kind(self, status: int) -> str:
        return "UNAVAILABLE" if status == 503 else "INTERNAL"

    def error_body(self, reject: Reject) -> bytes:
        error: dict[str, Any] = {"code": reject.status, "message": reject.message, "status": reject.kind}
        if "details" in reject.extra:
            error["details"] = reject.extra["details"]
        return ENCODER.encode({"error": error})

    def rate_limit_response(self, wait: float | None, extra: dict[str, str], *, bare: bool) -> web.Response:
        details = [] if bare or wait is None else [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{max(wait, 0.001):.3f}s"}]
        return self.error_response(Reject(429, "RESOURCE_EXHAUSTED", RATE_LIMIT_MESSAGE, details=details))

    def budget_headers(self, budget: Budget) -> dict[str, str]:
        return {}

    def success_body(self, call: Call, text: str, finish: str, cached: int, salt: int) -> bytes:
        prompt, completion, reads, _ = usage_numbers(call, text, cached)
        return ENCODER.encode({
            "candidates": [{"content": {"parts": [{"text": text}], "role": "model"},
                            "finishReason": "MAX_TOKENS" if finish == "length" else "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": completion,
                              "totalTokenCount": prompt + completion, "cachedContentTokenCount": reads},
            "modelVersion": call.model,
            "responseId": f"fake{salt}",
        })

    def filtered_body(self, call: Call, *, prompt_blocked: bool) -> bytes:
        prompt, _, _, _ = usage_numbers(call, "", 0)
        if prompt_blocked:
            return ENCODER.encode({"promptFeedback": {"blockReason": "SAFETY", "safetyRatings": []},
                                   "usageMetadata": {"promptTokenCount": prompt, "totalTokenCount": prompt}, "modelVersion": call.model})
        return ENCODER.encode({
            "candidates": [{"finishReason": "SAFETY", "index": 0,
                            "safetyRatings": [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}]}],
            "usageMetadata": {"promptTokenCount": prompt, "totalTokenCount": prompt}, "modelVersion": call.model,
        })


def _text(content: Any, where: str) -> str:
    parts = content.get("parts") if isinstance(content, dict) else None
    if not isinstance(parts, list) or not parts:
        raise Reject(400, "INVALID_ARGUMENT", f"* GenerateContentRequest.{where}.parts: contents.parts must not be empty.")
    texts = []
    for part in parts:
        if not isinstance(part, dict) or not isinstance(part.get("text"), str):
            raise Reject(400, "INVALID_ARGUMENT", f"* GenerateContentRequest.{where}.parts: only text parts are supported here")
        texts.append(part["text"])
    return "".join(texts)
