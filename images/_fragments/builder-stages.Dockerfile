# A builder's stages up to its own checks: the system packages, the locked Python stack
# in a stage of its own (so the wheels never become a layer), then this checkout's
# packages. The image's Dockerfile adds its checks and ends with builder-env.
FROM ${BASE} AS system
# trt-edge-fragment: system-packages

FROM system AS deps
# trt-edge-fragment: locked-venv

FROM system
COPY --from=deps /opt/trt-edge /opt/trt-edge
# trt-edge-fragment: project-packages
