"""The `trt-edge` command line: one module per sub-command, each defining `COMMAND`,
discovered and run by the shared shell (`trt_edge_runner.cli_shell`) from `main`."""
