"""`trt-edge-device serve`: the device's long-lived service around one C++ engine per bundle.

One module per job: `engine_client` (the `trt-edge-run serve` child over its JSON-lines
pipe), `engine_events` (each engine line decoded once, against its schema, into a typed
event), `scheduler` (one request in the engine, a bounded queue before it, deadlines),
`supervisor` (start, smoke-run, restart with backoff), `loaded_model` (a bundle with its engine,
scheduler and text), `openai_routes` and `kserve_routes` (the protocols clients speak),
`structured_output` (a JSON Schema as a grammar, and the per-token masks that hold a
generation to it), `tool_calls` (tools offered, calls forced and read back), `metrics` (every
Prometheus name in one place), `exposure` (who may connect), `hot_swap`
(follow the agent's active slot), `app` (assembly) and `server` (uvicorn). The engine protocol
is docs/engine-protocol.md.

Needs the `serve` extra (starlette, uvicorn, prometheus-client, tokenizers, jinja2), and the
`structured` extra (llguidance) for `response_format` and forced tool calls; nothing here
imports torch, executorch or numpy.
"""
