# A TensorRT-RTX builder's own check, then builder-env (which ends the image). The build
# fails unless TensorRT-RTX, the ONNX exporter stack (onnx, onnxscript: what
# `torch.onnx.export(..., dynamo=True)` needs) and ExecuTorch's exporter import, and unless
# a TensorRT-RTX Builder can be made. No NVIDIA runtime environment: TensorRT-RTX builds
# engines without a GPU (CPU-only ahead-of-time build), so its containers need no GPUs.
RUN /opt/trt-edge/bin/python -c "import tensorrt_rtx, onnx, onnxscript, executorch.exir; \
tensorrt_rtx.Builder(tensorrt_rtx.Logger())" \
 && /opt/trt-edge/bin/trt-edge --version
# trt-edge-fragment: builder-env
