# The host's extra CA certificates (corporate proxies), so tools in the image that do
# reach the network trust the proxy the host trusts; and, where the base lacks them,
# the system packages $APT_PACKAGES. apt goes through that proxy, so the certificates
# are copied first. apt packages are signature-checked but not version-pinned (the
# distribution archives do not keep old point releases); the Python stack, which
# decides the artifacts, is hashed (locked-venv).
ARG APT_PACKAGES
COPY certs/ /usr/local/share/ca-certificates/trt-edge/
RUN if [ -n "$APT_PACKAGES" ]; then \
      apt-get update \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
           $APT_PACKAGES ca-certificates \
      && rm -rf /var/lib/apt/lists/*; \
    fi \
 && if ls /usr/local/share/ca-certificates/trt-edge/*.crt >/dev/null 2>&1; then \
      update-ca-certificates >/dev/null; fi
