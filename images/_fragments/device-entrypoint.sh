#!/bin/sh
# Device container entrypoint: install the authorized key passed in
# $SSH_AUTHORIZED_KEYS (if any), then run sshd in the foreground. With
# arguments it runs them instead (e.g. `docker run IMAGE trt-edge-device info ...`).
set -eu
if [ -n "${SSH_AUTHORIZED_KEYS:-}" ]; then
  umask 077
  mkdir -p /root/.ssh
  printf '%s\n' "$SSH_AUTHORIZED_KEYS" > /root/.ssh/authorized_keys
fi
if [ "$#" -gt 0 ]; then
  exec "$@"
fi
exec /usr/sbin/sshd -D -e
