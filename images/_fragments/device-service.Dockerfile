# What a device container runs by default: the device service, `trt-edge-device serve`
# (OpenAI-compatible API, KServe v2, /metrics), serving the agent's active slot under
# TRT_EDGE_ROOT and following installs and rollbacks, as the systemd unit does on a
# flashed device. The entrypoint (device-entrypoint.sh, its header lists the modes) binds
# TRT_EDGE_SERVE_HOST:TRT_EDGE_SERVE_PORT. 0.0.0.0, so that `docker run -p` reaches it,
# is served only with an API key (TRT_EDGE_API_KEY), per the service's exposure rules;
# without one the service refuses to start and says so. `docker run IMAGE sshd` makes
# the container a device for fleet tooling instead (sshd only); any other command runs
# as given.
# context: device-entrypoint.sh
# The import check fails the build when the lock lacks what the service imports.
COPY device-entrypoint.sh /usr/local/sbin/trt-edge-device-entrypoint
RUN chmod 0755 /usr/local/sbin/trt-edge-device-entrypoint \
 && /opt/trt-edge/bin/python -c "import uvicorn, tokenizers, jinja2, trt_edge_runner.serve.app"
ENV TRT_EDGE_SERVE_HOST=0.0.0.0 \
    TRT_EDGE_SERVE_PORT=8000
EXPOSE 8000
# Liveness (the HTTP server answers), not readiness: a device waiting for its first
# install is healthy; load balancers ask /v2/health/ready themselves.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["/usr/local/sbin/trt-edge-device-entrypoint", "health"]
ENTRYPOINT ["/usr/local/sbin/trt-edge-device-entrypoint"]
CMD ["serve"]
