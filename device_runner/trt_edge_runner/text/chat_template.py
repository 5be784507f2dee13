"""A model's chat template, rendered the way transformers' `apply_chat_template` renders it.

Chat templates are Jinja programs written against transformers' environment, so a runner
that wants the same prompt must offer the same one (we write our own, to the behaviour
transformers 5 documents and runs):

- an immutable sandboxed environment with `trim_blocks` and `lstrip_blocks`, the
  `loopcontrols` extension (`{% break %}`/`{% continue %}`) and a `{% generation %}` block
  tag (it marks assistant text for training masks; rendering just emits its body);
- `tojson` as `json.dumps` (no HTML escaping; `indent`, `separators`, `sort_keys`,
  `ensure_ascii` keywords), `raise_exception(msg)` failing the render, `strftime_now(fmt)`,
  a `dict` constructor and a `namespace` that refuses underscore-prefixed attributes;
- the variables: `messages`, `tools`, `documents`, `add_generation_prompt`, the special
  tokens (`bos_token`, `eos_token`, …), then caller keywords;
- messages as plain JSON data with `None`-valued keys dropped, and a message's reasoning
  under `reasoning_content` and `thinking` whichever of the usual names it came in.

The build holds this to `apply_chat_template` on sample conversations (sdk
`trt_edge.llm.chat_check`), so a bundle never ships a template we render differently.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from trt_edge_runner.text.errors import ChatTemplateError, TextPackageMissingError

Message = Mapping[str, Any]

# Names a message's reasoning arrives under; templates read the first (and gpt-oss `thinking`).
_REASONING_KEYS = ("reasoning_content", "thinking", "reasoning")


def _jinja() -> Any:
    try:
        import jinja2
        import jinja2.ext
        import jinja2.sandbox
    except ImportError:
        raise TextPackageMissingError(
            "chat templates need the `jinja2` package on this machine",
            hint="pip install 'trt-edge-runner[text]' (or jinja2>=3.1.6)",
        ) from None
    return jinja2


def _environment() -> Any:
    """The Jinja environment chat templates are written for (see the module docstring)."""
    _jinja()  # a clear error when jinja2 is missing
    import jinja2
    import jinja2.ext
    import jinja2.sandbox

    class GenerationBlock(jinja2.ext.Extension):
        """`{% generation %}…{% endgeneration %}`: renders its body unchanged."""

        tags = {"generation"}  # noqa: RUF012 (jinja2 declares it on Extension)

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            call = self.call_method("_body")
            return jinja2.nodes.CallBlock(call, [], [], body).set_lineno(lineno)

        def _body(self, caller: Any) -> str:
            return str(caller())

    class SafeNamespace(jinja2.utils.Namespace):
        """`namespace(...)` without underscore-prefixed attributes (no reach into internals)."""

        def __init__(*args: Any, **kwargs: Any) -> None:
            self, rest = args[0], args[1:]
            attrs = dict(*rest, **kwargs)
            for name in attrs:
                _refuse_private(name)
            jinja2.utils.Namespace.__init__(self, attrs)

        def __setitem__(self, name: str, value: Any) -> None:
            _refuse_private(name)
            jinja2.utils.Namespace.__setitem__(self, name, value)

    def _refuse_private(name: Any) -> None:
        if isinstance(name, str) and name.startswith("_"):
            raise jinja2.exceptions.SecurityError(
                f"a chat template may not set the underscore-prefixed attribute {name!r}"
            )

    class DictMaker:
        """`dict(...)` and `dict.fromkeys(...)` and nothing else of the type."""

        def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
            return dict(*args, **kwargs)

        def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
            return dict.fromkeys(*args, **kwargs)

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(
        value: Any,
        ensure_ascii: bool = False,
        indent: int | None = None,
        separators: tuple[str, str] | None = None,
        sort_keys: bool = False,
    ) -> str:
        return json.dumps(
            value,
            ensure_ascii=ensure_ascii,
            indent=indent,
            separators=separators,
            sort_keys=sort_keys,
        )

    def strftime_now(fmt: str) -> str:
        return datetime.now().strftime(fmt)

    env = jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[GenerationBlock, jinja2.ext.loopcontrols],
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    env.globals["dict"] = DictMaker()
    env.globals["namespace"] = SafeNamespace
    return env


def plain(value: Any) -> Any:
    """`value` as plain JSON-like data (str/int/float/bool/None, dicts, lists, tuples): what
    a template may see. Anything else becomes an inert `<TypeName>` string."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    return f"<{type(value).__name__}>"


def prepare_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Messages as a template sees them: plain data, `None` values dropped, reasoning aliased."""
    prepared: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise ChatTemplateError(
                f"messages[{index}]: expected an object with 'role' and 'content', got "
                f"{type(message).__name__}"
            )
        entry = {k: v for k, v in plain(message).items() if v is not None}
        reasoning = next((entry[k] for k in _REASONING_KEYS if entry.get(k) is not None), None)
        if reasoning is not None:
            entry = {"thinking": reasoning, **entry, "reasoning_content": reasoning}
        prepared.append(entry)
    return prepared


class ChatTemplate:
    """One compiled chat template and the special tokens it renders with."""

    def __init__(self, source: str, special_tokens: Mapping[str, str] | None = None) -> None:
        jinja2 = _jinja()
        self.source = source
        self.special_tokens = dict(special_tokens or {})
        try:
            self._template = _environment().from_string(source)
        except jinja2.exceptions.TemplateError as exc:
            raise ChatTemplateError(
                f"the chat template does not compile: {exc}",
                hint="rebuild the bundle from a folder whose chat template transformers renders",
            ) from None

    def render(
        self,
        messages: Sequence[Message],
        *,
        add_generation_prompt: bool = True,
        tools: Sequence[Mapping[str, Any]] | None = None,
        documents: Sequence[Mapping[str, Any]] | None = None,
        **kwargs: Any,
    ) -> str:
        """The prompt text for `messages`; ChatTemplateError naming what the template said."""
        jinja2 = _jinja()
        if not messages:
            raise ChatTemplateError("a chat needs at least one message")
        variables = {**self.special_tokens, **plain(kwargs)}
        try:
            rendered: str = self._template.render(
                messages=prepare_messages(messages),
                tools=plain(list(tools)) if tools is not None else None,
                documents=plain(list(documents)) if documents is not None else None,
                add_generation_prompt=add_generation_prompt,
                **variables,
            )
        except jinja2.exceptions.TemplateError as exc:
            raise ChatTemplateError(f"the chat template refused the conversation: {exc}") from None
        return rendered
