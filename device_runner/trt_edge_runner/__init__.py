"""trt_edge_runner: the device side of trt-edge.

Profile policy and guards (pure, standard library only), bundle reading, the
ExecuTorch-backed runner and the device agent. Never imports the host package
`trt_edge`; the host may import this one.
"""

__version__ = "0.1.0"
