"""Session fixtures for a real Docker engine and the project's images (owned by the containers area)."""
