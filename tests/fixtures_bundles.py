"""Session fixtures that build the example bundles with the real pipeline (owned by the build area)."""
