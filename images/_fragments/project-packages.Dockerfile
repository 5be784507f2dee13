# The project's own packages from src/ (trt_edge_runner, and trt_edge in builders),
# installed last so a source change rebuilds only these layers. Their dependencies
# are the lock's (--no-deps); setuptools, their build backend, is in the lock too.
COPY src/ /tmp/trt-edge-src/
RUN /opt/trt-edge/bin/pip install --disable-pip-version-check --no-cache-dir --no-index \
      --no-deps --no-build-isolation /tmp/trt-edge-src/* \
 && rm -rf /tmp/trt-edge-src
