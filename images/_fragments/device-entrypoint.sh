#!/bin/sh
# Device container entrypoint. The first argument picks what the container is:
#
#   serve [OPTION...]  (the default command) the device service, `trt-edge-device serve`,
#                      serving the agent's active slot under $TRT_EDGE_ROOT and following
#                      installs and rollbacks; bound to $TRT_EDGE_SERVE_HOST (the image
#                      says 0.0.0.0, which the service serves only with an API key:
#                      $TRT_EDGE_API_KEY) on $TRT_EDGE_SERVE_PORT (8000). OPTIONs go to
#                      `trt-edge-device serve` after those two, so they win. With
#                      $SSH_AUTHORIZED_KEYS set, sshd runs beside it, as on a device.
#   sshd               sshd in the foreground only: a device for fleet tooling to reach.
#   health             the image's HEALTHCHECK: the service's /v2/health/live answers
#                      (always healthy when the container runs sshd only).
#   -OPTION...         `serve -OPTION...` (`docker run IMAGE --max-queue 4`).
#   anything else      run as given (`docker run IMAGE trt-edge-device info`).
#
# The authorized key in $SSH_AUTHORIZED_KEYS (if any) is installed for root first.
set -eu

MODE_FILE=/run/trt-edge-entrypoint.mode

authorize_ssh_key() {
  if [ -n "${SSH_AUTHORIZED_KEYS:-}" ]; then
    umask 077
    mkdir -p /root/.ssh
    printf '%s\n' "$SSH_AUTHORIZED_KEYS" > /root/.ssh/authorized_keys
    umask 022
  fi
}

case "${1:-serve}" in
  -*) set -- serve "$@" ;;
esac

case "${1:-serve}" in
  serve)
    [ "$#" -gt 0 ] && shift
    authorize_ssh_key
    if [ -n "${SSH_AUTHORIZED_KEYS:-}" ]; then
      /usr/sbin/sshd -e  # detaches; the service stays the container's main process
    fi
    host="${TRT_EDGE_SERVE_HOST:-0.0.0.0}"
    port="${TRT_EDGE_SERVE_PORT:-8000}"
    case "$host" in
      127.*|localhost|::1|\[::1\]) ;;
      *)
        case " $* " in
          *" --api-key"*) ;;
          *)
            if [ -z "${TRT_EDGE_API_KEY:-}" ]; then
              echo "trt-edge-device-entrypoint: the service binds $host (TRT_EDGE_SERVE_HOST)" \
                "so that other machines reach it, which needs an API key: run the container" \
                "with -e TRT_EDGE_API_KEY=KEY (clients send 'Authorization: Bearer KEY'), or" \
                "with --network host -e TRT_EDGE_SERVE_HOST=127.0.0.1 to serve this machine" \
                "only" >&2
            fi
            ;;
        esac
        ;;
    esac
    # The port the health probe asks: the last --port among the OPTIONs wins, as in argparse.
    probe_port="$port" previous=""
    for argument in "$@"; do
      case "$previous:$argument" in
        --port:*) probe_port="$argument" ;;
        *:--port=*) probe_port="${argument#--port=}" ;;
      esac
      previous="$argument"
    done
    echo "serve $probe_port" > "$MODE_FILE"
    exec trt-edge-device serve --host "$host" --port "$port" "$@"
    ;;
  sshd)
    authorize_ssh_key
    echo sshd > "$MODE_FILE"
    exec /usr/sbin/sshd -D -e
    ;;
  health)
    [ -f "$MODE_FILE" ] || exit 0
    read -r mode probe_port < "$MODE_FILE"
    [ "$mode" = serve ] || exit 0
    exec /opt/trt-edge/bin/python - "$probe_port" <<'PROBE'
import ssl
import sys
import urllib.request

unverified = ssl.create_default_context()
unverified.check_hostname = False
unverified.verify_mode = ssl.CERT_NONE

# Loopback reaches the service whether it binds 0.0.0.0 or 127.0.0.1; liveness asks for no
# key. A service started with --tls-cert answers https only: try that second, unverified
# (the probe learns only "up", and a device's certificate rarely names 127.0.0.1).
for url, context in (
    (f"http://127.0.0.1:{sys.argv[1]}/v2/health/live", None),
    (f"https://127.0.0.1:{sys.argv[1]}/v2/health/live", unverified),
):
    try:
        with urllib.request.urlopen(url, timeout=4, context=context) as response:
            if response.status == 200:
                sys.exit(0)
    except OSError:
        continue
print("the service does not answer /v2/health/live", file=sys.stderr)
sys.exit(1)
PROBE
    ;;
  *)
    authorize_ssh_key
    echo command > "$MODE_FILE"
    exec "$@"
    ;;
esac
