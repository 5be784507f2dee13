"""Sub-commands of `trt-edge-device`: one module per command, discovered by `device_cli`."""
