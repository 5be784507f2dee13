# Identity: `trt-edge images build` passes these build arguments; `trt-edge images list`
# and the test fixtures read the labels to reuse an image only when its lock, sources
# and recipe are the current ones.
ARG TRT_EDGE_VERSION=unknown
ARG LOCK_SHA256=unknown
ARG SOURCE_SHA256=unknown
ARG CONTENT_KEY=unknown
ARG BASE
LABEL org.opencontainers.image.title="{{title}}" \
      org.opencontainers.image.description="{{description}}" \
      org.opencontainers.image.version="${TRT_EDGE_VERSION}" \
      org.opencontainers.image.base.name="${BASE}" \
      io.trt-edge.image="{{image}}" \
      io.trt-edge.role="{{role}}" \
      io.trt-edge.lock-sha256="${LOCK_SHA256}" \
      io.trt-edge.source-sha256="${SOURCE_SHA256}" \
      io.trt-edge.content-key="${CONTENT_KEY}"
