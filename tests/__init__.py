"""The test suite, one package per area; shared helpers live in `tests.helpers` (see README.md)."""
