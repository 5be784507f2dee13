"""Tools in chat (OpenAI's `tools`, `tool_choice`): what a request offers, the grammar that
forces a call, and the calls found in the generated text.

The tools reach the model through its own chat template (`tools`, as transformers passes
them), so a model trained to call tools sees them the way it was trained. Its calls are read
back in the Hermes format Qwen and many others use — `<tool_call>\\n{"name": …, "arguments":
{…}}\\n</tool_call>` — into OpenAI's `tool_calls`, with `arguments` as JSON text.
`tool_choice` `required` or a named function holds the generation to exactly that format,
with the arguments held to the function's `parameters` schema (a grammar, as structured
output is held: serve.structured_output); `auto` lets the model choose and reads any calls it
wrote; `none` renders no tools.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from trt_edge_runner.serve.api_errors import bad_field

CALL_OPEN = "<tool_call>\n"
CALL_CLOSE = "\n</tool_call>"
CALL_PATTERN = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)


@dataclass(frozen=True)
class Tool:
    """One function a request offers."""

    name: str
    parameters: dict[str, Any]
    description: str | None = None

    def template_entry(self) -> dict[str, Any]:
        """The tool as chat templates read it (OpenAI's shape, as transformers passes it)."""
        function: dict[str, Any] = {"name": self.name, "parameters": self.parameters}
        if self.description is not None:
            function["description"] = self.description
        return {"type": "function", "function": function}


@dataclass(frozen=True)
class ToolUse:
    """The tools of a request and what `tool_choice` asks of them."""

    tools: tuple[Tool, ...] = ()
    choice: str = "auto"  # auto | none | required | function (then `named`)
    named: str | None = None

    @property
    def active(self) -> bool:
        """Tools are rendered and calls read back."""
        return bool(self.tools) and self.choice != "none"

    @property
    def forced(self) -> bool:
        return self.active and self.choice in ("required", "function")

    def template_tools(self) -> list[dict[str, Any]] | None:
        """What the template renders: the offered tools, with `tool_choice` none too (the
        model knows them; none only means its text is not read for calls)."""
        return [tool.template_entry() for tool in self.tools] if self.tools else None

    def forced_grammar(self) -> str:
        """The Lark grammar (llguidance's dialect: `%json` embeds a JSON Schema) of one call
        of the tools `tool_choice` allows, arguments held to their `parameters`."""
        allowed = [t for t in self.tools if self.named is None or t.name == self.named]
        call = {
            "x-guidance": {"whitespace_flexible": False},
            "anyOf": [
                {
                    "type": "object",
                    "properties": {"name": {"const": t.name}, "arguments": t.parameters},
                    "required": ["name", "arguments"],
                    "additionalProperties": False,
                }
                for t in allowed
            ],
        }
        start = f"start: {json.dumps(CALL_OPEN)} call {json.dumps(CALL_CLOSE)}"
        return f"{start}\ncall: %json {json.dumps(call)}"


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: str  # JSON text, as OpenAI sends it
    id: str

    def to_openai(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


def _tool(value: Any, place: str) -> Tool:
    if not isinstance(value, dict) or value.get("type") != "function":
        raise bad_field(place, 'expected {"type": "function", "function": {...}}')
    function = value.get("function")
    if not isinstance(function, dict):
        raise bad_field(f"{place}.function", "expected an object with name and parameters")
    name = function.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name):
        raise bad_field(f"{place}.function.name", "expected 1 to 64 of a-z, A-Z, 0-9, _ and -")
    parameters = function.get("parameters", {"type": "object", "properties": {}})
    if not isinstance(parameters, dict):
        raise bad_field(f"{place}.function.parameters", "expected a JSON Schema object")
    description = function.get("description")
    if description is not None and not isinstance(description, str):
        raise bad_field(f"{place}.function.description", "expected a string")
    return Tool(name, parameters, description)


def tool_use_of(doc: dict[str, Any]) -> ToolUse:
    """`tools` and `tool_choice` of a chat body, checked; a 400 naming the part at fault."""
    raw = doc.get("tools")
    if raw is None or raw == []:
        if doc.get("tool_choice") not in (None, "none", "auto"):
            raise bad_field("tool_choice", "names a tool but the request offers none (tools)")
        return ToolUse()
    if not isinstance(raw, list):
        raise bad_field("tools", "expected a list of function tools")
    tools = tuple(_tool(value, f"tools[{i}]") for i, value in enumerate(raw))
    names = [t.name for t in tools]
    if len(set(names)) != len(names):
        raise bad_field("tools", "two tools share a name")
    parallel = doc.get("parallel_tool_calls")
    if parallel is not None and not isinstance(parallel, bool):
        raise bad_field("parallel_tool_calls", "expected true or false")
    choice = doc.get("tool_choice", "auto")
    if choice in ("auto", "none", "required"):
        return ToolUse(tools, choice)
    if isinstance(choice, dict) and choice.get("type") == "function":
        function = choice.get("function")
        name = function.get("name") if isinstance(function, dict) else None
        if name not in names:
            raise bad_field(
                "tool_choice.function.name", f"{name!r} is not one of the tools ({names})"
            )
        return ToolUse(tools, "function", name)
    raise bad_field(
        "tool_choice", 'expected "auto", "none", "required" or {"type": "function", ...}'
    )


def parse_tool_calls(text: str, tools: Sequence[Tool]) -> tuple[str | None, list[ToolCall]]:
    """The text outside any call (None when empty) and the calls in `text` of a tool the
    request offered, with an object of arguments; a block that is neither stays text."""
    known = {t.name for t in tools}
    calls: list[ToolCall] = []
    kept: list[str] = []
    last = 0
    for match in CALL_PATTERN.finditer(text):
        try:
            doc = json.loads(match.group(1))
        except ValueError:
            continue
        if not (isinstance(doc, dict) and doc.get("name") in known):
            continue
        arguments = doc.get("arguments", {})
        if not isinstance(arguments, dict):
            continue
        kept.append(text[last : match.start()])
        last = match.end()
        calls.append(ToolCall(doc["name"], json.dumps(arguments), f"call_{uuid.uuid4().hex}"))
    kept.append(text[last:])
    content = "".join(kept).strip()
    return (content or None), calls
