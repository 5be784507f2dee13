"""Sub-commands of `trt-edge-device`: one module per command, each defining `COMMAND`,
discovered and run by the shared shell (`trt_edge_runner.cli_shell`)."""
