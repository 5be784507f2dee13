# How a builder runs: `trt-edge` on PATH, the CA bundle (with the host's extra
# certificates) for every TLS client, no byte-code written by the unprivileged build
# user (the lock's packages were compiled at install), HOME writable by any uid.
ENV PATH=/opt/trt-edge/bin:${PATH} \
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt \
    PYTHONDONTWRITEBYTECODE=1 \
    HOME=/tmp
WORKDIR /work
# The labels come last: their build arguments change with every build, and a step
# after them would never be taken from the layer cache.
# trt-edge-fragment: identity-labels
