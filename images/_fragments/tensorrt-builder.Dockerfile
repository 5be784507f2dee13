# A TensorRT builder's own check and environment, then builder-env (which ends the
# image). The build fails unless TensorRT, Torch-TensorRT and ExecuTorch's exporter
# import (an incomplete lock has failed `pip check` before this), and its containers
# see the GPUs the NVIDIA container runtime passes in.
RUN /opt/trt-edge/bin/python -c "import tensorrt, torch_tensorrt, executorch.exir"
ENV NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility
# trt-edge-fragment: builder-env
