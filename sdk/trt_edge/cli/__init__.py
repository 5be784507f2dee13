"""The `trt-edge` command line: one module per sub-command, dispatched by `main`."""
