"""The OpenAI-compatible API for causal-LM bundles: models, completions, chat completions.

Bodies and streams are shaped as OpenAI's own (the official `openai` client parses them):
server-sent events `data: {chunk}` and a final `data: [DONE]`; an error after the stream
started is a `data: {"error": {...}}` event, which the client raises. A streamed response
starts only once the first token exists, so a full queue, a deadline or a dead engine before
it is a real HTTP status (503, 504, 502) rather than an error inside a 200. A client that
goes away cancels its generation: the engine stops at its next token.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from trt_edge_runner.serve.api_errors import CANCELLED, OK, ApiError, bad_field
from trt_edge_runner.serve.engine_events import Done, GenerateDone, Stop, Token
from trt_edge_runner.serve.generation_params import (
    GenerationParams,
    body_object,
    generation_params,
    messages_of,
    prompt_of,
)
from trt_edge_runner.serve.loaded_model import LoadedModel
from trt_edge_runner.serve.service import Service
from trt_edge_runner.serve.structured_output import Grammar, compile_json_schema, compile_lark
from trt_edge_runner.serve.tool_calls import ToolCall, ToolUse, parse_tool_calls, tool_use_of
from trt_edge_runner.text import BundleText, TextError, TextStream

COMPLETIONS_DEFAULT_MAX_TOKENS = 16
FINISH_REASONS: dict[Stop, str] = {
    "eos": "stop",
    "stop_token": "stop",
    "cancelled": "stop",
    "max_new_tokens": "length",
    "cache_full": "length",
}


def openai_error_body(error: ApiError) -> dict[str, Any]:
    return {
        "error": {
            "message": error.text(),
            "type": error.kind,
            "param": error.field,
            "code": error.status,
        }
    }


@dataclass
class Generation:
    """One OpenAI generation request, checked and turned into the engine's terms."""

    endpoint: str
    chat: bool
    model: LoadedModel
    params: GenerationParams
    prompt_ids: list[int]
    request_id: str
    created: int
    grammar: Grammar | None = None  # response_format, or a forced tool call
    tool_use: ToolUse = field(default_factory=ToolUse)

    def engine_body(self) -> dict[str, Any]:
        llm = self.model.manifest.llm
        assert llm is not None
        room = llm.max_cache_len - len(self.prompt_ids)
        default = room if self.chat else COMPLETIONS_DEFAULT_MAX_TOKENS
        wanted = self.params.max_tokens or default
        return {
            "prompt_ids": self.prompt_ids,
            "max_new_tokens": max(1, min(wanted, room)),
            "sampling": self.params.sampling.to_engine(),
            "stop_token_ids": list(self.params.stop_token_ids),
            "ignore_eos": self.params.ignore_eos,
            "reuse_prefix": True,
        }

    def chunk(self, delta: str | None, finish: str | None, *, role: bool = False) -> dict[str, Any]:
        if self.chat:
            content: dict[str, Any] = {}
            if role:
                content["role"] = "assistant"
            if delta is not None:
                content["content"] = delta
            choice: dict[str, Any] = {"index": 0, "delta": content, "finish_reason": finish}
            kind = "chat.completion.chunk"
        else:
            choice = {"index": 0, "text": delta or "", "logprobs": None, "finish_reason": finish}
            kind = "text_completion"
        return self._envelope(kind, [choice])

    def tool_call_chunks(self, calls: list[ToolCall]) -> list[dict[str, Any]]:
        """Each call as OpenAI streams one: its id, type and name first, then the arguments."""
        chunks = []
        for index, call in enumerate(calls):
            head = {"index": index, "id": call.id, "type": "function",
                    "function": {"name": call.name, "arguments": ""}}  # fmt: skip
            tail = {"index": index, "function": {"arguments": call.arguments}}
            for delta in (head, tail):
                choice = {"index": 0, "delta": {"tool_calls": [delta]}, "finish_reason": None}
                chunks.append(self._envelope("chat.completion.chunk", [choice]))
        return chunks

    def whole(self, text: str, finish: str, usage: dict[str, int]) -> dict[str, Any]:
        if self.chat and self.tool_use.active:
            content, calls = parse_tool_calls(text, self.tool_use.tools)
            if calls:
                message: dict[str, Any] = {
                    "role": "assistant",
                    "content": content,
                    "tool_calls": [call.to_openai() for call in calls],
                }
                called = {"index": 0, "message": message, "finish_reason": "tool_calls"}
                return {**self._envelope("chat.completion", [called]), "usage": usage}
        if self.chat:
            message = {"role": "assistant", "content": text}
            choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish}
            doc = self._envelope("chat.completion", [choice])
        else:
            choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}
            doc = self._envelope("text_completion", [choice])
        return {**doc, "usage": usage}

    def _envelope(self, kind: str, choices: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": self.request_id,
            "object": kind,
            "created": self.created,
            "model": self.model.name,
            "choices": choices,
        }


async def list_models(request: Request) -> Response:
    """Every model served; `loaded` (not OpenAI's) says whether its engine is in memory."""
    service: Service = request.app.state.service
    data = [
        {"id": listed.name, "object": "model", "created": int(service.started),
         "owned_by": "trt-edge", "loaded": listed.loaded is not None}
        for listed in service.listed()
    ]  # fmt: skip
    service.finish("/v1/models", OK)
    return JSONResponse({"object": "list", "data": data})


async def _generation(request: Request, endpoint: str, chat: bool) -> Generation:
    service: Service = request.app.state.service
    body = body_object(await request.body())
    name = body.get("model")
    if name is not None and not isinstance(name, str):
        raise bad_field("model", f"expected a string, got {name!r}")
    model = await service.model(name or None)
    llm = model.manifest.llm
    if llm is None:
        raise ApiError(
            400,
            f"{model.name!r} is not a causal LM (its bundle.json has no llm section); "
            f"run it with POST /v2/models/{model.name}/infer",
            field="model",
        )
    text = model.text
    if text is None:
        raise ApiError(
            400, f"{model.name!r} carries no tokenizer: text cannot be served", field="model"
        )
    params = generation_params(
        body, max_tokens_field="max_completion_tokens" if chat else "max_tokens"
    )
    tool_use = ToolUse()
    if not chat and body.get("tools") not in (None, []):
        raise bad_field("tools", "only /v1/chat/completions takes tools")
    if chat:
        messages = messages_of(body)
        tool_use = tool_use_of(body)
        if not text.has_chat_template:
            raise ApiError(
                400,
                f"{model.name!r} carries no chat template; use /v1/completions",
                field="messages",
            )
        try:
            prompt_ids = text.encode_chat(messages, tools=tool_use.template_tools())
        except TextError as exc:  # the template refused the conversation (raise_exception)
            raise bad_field("messages", exc.message) from None
    else:
        prompt = prompt_of(body)
        # Ids past the vocabulary are the engine's to refuse (it owns that limit, and says
        # which ids): `_in_api_terms` names the field the client sent.
        prompt_ids = text.encode(prompt) if isinstance(prompt, str) else prompt
    if not prompt_ids:
        raise bad_field("messages" if chat else "prompt", "encodes to no tokens")
    if len(prompt_ids) >= llm.max_cache_len:
        raise bad_field(
            "messages" if chat else "prompt",
            f"{len(prompt_ids)} tokens leave no room to generate: the model's cache holds "
            f"{llm.max_cache_len}",
        )
    grammar = None
    if params.response_format.constrained:
        place = (
            "response_format.json_schema"
            if params.response_format.type == "json_schema"
            else "response_format"
        )
        # Off the event loop: the tokenizer's first build and a large grammar take long.
        grammar = await asyncio.to_thread(
            compile_json_schema,
            model.grammar_tokenizer(),
            params.response_format.json_schema(),
            place,
        )
    if tool_use.forced:
        if grammar is not None:
            raise bad_field("tool_choice", "a forced tool call cannot also follow response_format")
        grammar = await asyncio.to_thread(
            compile_lark, model.grammar_tokenizer(), tool_use.forced_grammar(), "tools"
        )
    prefix = "chatcmpl" if chat else "cmpl"
    return Generation(
        endpoint, chat, model, params, prompt_ids, f"{prefix}-{uuid.uuid4().hex}",
        int(time.time()), grammar, tool_use,
    )  # fmt: skip


def _in_api_terms(error: ApiError, job: Generation) -> ApiError:
    """An engine refusal names the engine's field (`prompt_ids`, `max_new_tokens`,
    `sampling.top_p`); the client sent `prompt` or `messages`, `max_tokens`, `top_p`."""
    field = error.field or ""
    if field == "prompt_ids" or field.startswith("prompt_ids["):
        api = "messages" if job.chat else "prompt"
    elif field == "max_new_tokens":
        api = "max_completion_tokens" if job.chat else "max_tokens"
    elif field.startswith("sampling."):
        api = field.removeprefix("sampling.")
    else:
        return error
    message = error.message.removeprefix(f"{field}: ")
    return ApiError(
        error.status, message, field=api, outcome=error.outcome, kind=error.kind,
        headers=error.headers,
    )  # fmt: skip


def _usage(prompt: int, completion: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


async def _generate(request: Request, endpoint: str, chat: bool) -> Response:
    service: Service = request.app.state.service
    arrived = time.monotonic()
    job: Generation | None = None
    try:
        job = await _generation(request, endpoint, chat)
        model = job.model
        text: BundleText | None = model.text
        assert text is not None
        stream = text.stream(job.params.stop)
        # A matcher is built from the grammar: off the event loop, as compiling was.
        constraint = (
            None if job.grammar is None else await asyncio.to_thread(job.grammar.constraint)
        )
        batches = model.generate(job.engine_body(), model.scheduler.deadline(), arrived, constraint)
        if job.params.stream:
            first = await _first(batches)
            return StreamingResponse(
                _sse(service, job, stream, first, batches),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
            )
        result = await _until_disconnect(request, _collect(job, stream, batches))
        if result is None:
            service.finish(endpoint, CANCELLED)
            return Response(status_code=499)
        service.finish(endpoint, OK)
        return JSONResponse(result)
    except ApiError as raised:
        error = raised if job is None else _in_api_terms(raised, job)
        service.finish(endpoint, error.outcome)
        return JSONResponse(openai_error_body(error), error.status, headers=error.headers)


async def _first(batches: AsyncGenerator[list[Token | Done], None]) -> list[Token | Done]:
    """The first batch of events (the first token, or `done`): errors before it are HTTP
    statuses."""
    try:
        return await batches.__anext__()
    except BaseException:
        await batches.aclose()
        raise


async def _collect(
    job: Generation, stream: TextStream, batches: AsyncGenerator[list[Token | Done], None]
) -> dict[str, Any]:
    count = 0
    reason = "stop"
    async with contextlib.aclosing(batches):
        async for batch in batches:
            for event in batch:
                if isinstance(event, Token):
                    count += 1
                    stream.push(event.token)
                    if stream.stopped:
                        break
                elif isinstance(event, GenerateDone):
                    reason = FINISH_REASONS[event.stop]
            if stream.stopped:
                break
    stream.finish()
    return job.whole(stream.text, reason, _usage(len(job.prompt_ids), count))


async def _until_disconnect(request: Request, work: Any) -> dict[str, Any] | None:
    """`work`'s result, or None (and `work` cancelled) when the client goes away first."""
    task = asyncio.ensure_future(work)

    async def disconnected() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    watcher = asyncio.ensure_future(disconnected())
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
    if task.done():
        result: dict[str, Any] = task.result()
        return result
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, ApiError):
        await task
    return None


def _event(doc: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(doc, separators=(",", ":")).encode() + b"\n\n"


async def _sse(
    service: Service,
    job: Generation,
    stream: TextStream,
    first: list[Token | Done],
    batches: AsyncGenerator[list[Token | Done], None],
) -> AsyncIterator[bytes]:
    """One SSE event per token, as OpenAI sends them; the events of the tokens that arrived
    together leave in one write (one send through the ASGI stack, not one each). A token's
    text may be empty (a character's bytes not yet complete, text held back while it may
    begin a stop string, or an id the tokenizer has no text for): its event still leaves,
    so a client sees every token arrive (time to first token, time per token)."""
    outcome = CANCELLED
    count = 0
    reason = "stop"
    hold = job.tool_use.active  # the text may be a tool call: it leaves once it is whole
    try:
        if job.chat:
            yield _event(job.chunk("", None, role=True))
        batch: list[Token | Done] | None = first
        ended = False
        while batch is not None and not ended:
            out = []
            for event in batch:
                if isinstance(event, Token):
                    count += 1
                    delta = stream.push(event.token)
                    if not hold:
                        out.append(_event(job.chunk(delta, None)))
                    if stream.stopped:
                        ended = True
                        break
                elif isinstance(event, GenerateDone):
                    reason = FINISH_REASONS[event.stop]
                    ended = True
            if out:
                yield b"".join(out)
            if not ended:
                batch = await anext_or_none(batches)
        rest = stream.finish()
        if hold:
            content, calls = parse_tool_calls(stream.text, job.tool_use.tools)
            if content:
                yield _event(job.chunk(content, None))
            if calls:
                yield b"".join(_event(chunk) for chunk in job.tool_call_chunks(calls))
                reason = "tool_calls"
        elif rest:
            yield _event(job.chunk(rest, None))
        yield _event(job.chunk(None if job.chat else "", reason))
        if job.params.include_usage:
            yield _event({**job._envelope(job.chunk("", None)["object"], []),
                          "usage": _usage(len(job.prompt_ids), count)})  # fmt: skip
        yield b"data: [DONE]\n\n"
        outcome = OK
    except ApiError as error:
        outcome = error.outcome
        yield _event(openai_error_body(error))
        yield b"data: [DONE]\n\n"
    finally:
        await batches.aclose()
        service.finish(job.endpoint, outcome)


async def anext_or_none(
    batches: AsyncGenerator[list[Token | Done], None],
) -> list[Token | Done] | None:
    try:
        return await batches.__anext__()
    except StopAsyncIteration:
        return None


async def completions(request: Request) -> Response:
    return await _generate(request, "/v1/completions", chat=False)


async def chat_completions(request: Request) -> Response:
    return await _generate(request, "/v1/chat/completions", chat=True)


ROUTES = [
    Route("/v1/models", list_models, methods=["GET"]),
    Route("/v1/completions", completions, methods=["POST"]),
    Route("/v1/chat/completions", chat_completions, methods=["POST"]),
]
