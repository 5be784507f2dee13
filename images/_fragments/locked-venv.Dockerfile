# The image's Python stack: exactly lock.txt, from the wheelhouse the host prepared.
# No step reaches an index or the network (--no-index), --require-hashes makes pip
# refuse any wheel whose bytes differ from the lock, and --no-deps installs the
# closure the lock writes down, nothing a package's metadata adds. PIP_CHECK=1 fails
# the build when that closure is incomplete instead of shipping an image that cannot
# import its stack. Run in a stage of its own: the final stage copies /opt/trt-edge,
# so the wheels never become a layer of the image.
ARG VENV_OPTIONS
ARG PIP_CHECK
COPY lock.txt /tmp/lock.txt
COPY wheels/ /tmp/wheels/
RUN python3 -m venv $VENV_OPTIONS /opt/trt-edge \
 && /opt/trt-edge/bin/pip install --disable-pip-version-check --no-cache-dir --no-index \
      --find-links /tmp/wheels --require-hashes --no-deps -r /tmp/lock.txt \
 && if [ "$PIP_CHECK" = 1 ]; then /opt/trt-edge/bin/pip check; fi
