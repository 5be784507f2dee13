"""`trt-edge build`: a manifest through the stages of `trt_edge.pipeline.stages` to a bundle.

load → plan → export → lower → bundle (staged) → validate (the staged copy) → commit.
Each stage lives in its own module and returns a value the next stage takes (like
ExecuTorch's `exir` managers), so stages are testable alone and cacheable by the hash
of their inputs; `trt_edge.pipeline.run.build` wires them together. Nothing here
imports torch or executorch at module level: `trt-edge --help` stays instant.
"""
