"""Fleet test fixtures: the agent tests' signed bundles (shared, built once per session)."""

from agent.conftest import agent_bundles  # type: ignore[import-not-found]  # noqa: F401
