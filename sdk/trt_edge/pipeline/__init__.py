"""`trt-edge build`: manifest → model → plan → export → lower → bundle → validate.

Each stage lives in its own module and returns a value the next stage takes
(like ExecuTorch's `exir` managers), so stages are testable alone and cacheable
by the hash of their inputs. `pipeline.build` wires them together. Nothing here
imports torch or executorch at module level: `trt-edge --help` stays instant.
"""
