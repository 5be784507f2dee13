"""Signed bundles into an OCI registry (`trt-edge publish`) and channels moved between
versions (`trt-edge promote`). The artifact layout is the device's
(`trt_edge_runner.follow.artifact`), the client the device's too
(`trt_edge_runner.follow.registry`): both sides speak one contract through one client.
"""
