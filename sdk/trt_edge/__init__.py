"""trt-edge: ship PyTorch models as ExecuTorch programs with TensorRT delegates to edge devices.

The host-side package. It must stay cheap to import: heavy libraries (torch,
executorch, docker) are imported inside the functions that need them.
"""

__version__ = "0.1.0"
