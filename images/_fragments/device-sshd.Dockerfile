# A device reachable like a real one: the device CLI, and sshd (run by the entrypoint of
# the device-service fragment: `docker run IMAGE sshd`, or beside the service when
# SSH_AUTHORIZED_KEYS is set).
# Host keys are generated here, at image build (never shipped in a base), and every
# container of one image shares them: right for test fleets, which pin them with
# StrictHostKeyChecking off; a real device generates its own. The device CLI is linked
# onto the default PATH because sshd sessions do not inherit the image's ENV;
# `trt-edge-python` is a wrapper, not a symlink, because a symlinked interpreter
# outside the venv folder does not find the venv.
RUN rm -f /etc/ssh/ssh_host_* \
 && ssh-keygen -A >/dev/null \
 && mkdir -p /run/sshd /root/.ssh \
 && chmod 0700 /root/.ssh \
 && ln -s /opt/trt-edge/bin/trt-edge-device /usr/local/bin/trt-edge-device \
 && printf '#!/bin/sh\nexec /opt/trt-edge/bin/python "$@"\n' > /usr/local/bin/trt-edge-python \
 && chmod 0755 /usr/local/bin/trt-edge-python \
 && trt-edge-device --help >/dev/null
ENV PATH=/opt/trt-edge/bin:${PATH}
EXPOSE 22
