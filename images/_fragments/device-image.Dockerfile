# A device image, whole: the system packages, the locked Python stack in a stage of its
# own, then the runner, the device agent, sshd, the service (the default command) and the
# identity labels. The image's Dockerfile declares BASE and the settings the fragments
# read, then names this one.
FROM ${BASE} AS system
# trt-edge-fragment: system-packages

FROM system AS deps
# trt-edge-fragment: locked-venv

FROM system
COPY --from=deps /opt/trt-edge /opt/trt-edge
# trt-edge-fragment: device-runner
# trt-edge-fragment: project-packages
# trt-edge-fragment: device-sshd
# trt-edge-fragment: device-service
# trt-edge-fragment: identity-labels
