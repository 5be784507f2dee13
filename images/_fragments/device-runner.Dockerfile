# What a device runs bundles with: the C++ runner trt-edge-run and the ExecuTorch
# libraries it loads, unpacked by `trt-edge images build` from the runner tarball
# (dist/trt-edge-runner-<version>-linux-<arch>.tar.gz) into runner/; the binaries find
# lib/ through their $ORIGIN-relative runpath. Linked into /usr/local/bin, on the
# default PATH, because sshd sessions do not inherit the image's ENV. The --help run
# fails the build if the system lacks a library the runner needs (libcrypto 3, ...).
COPY runner/ /opt/trt-edge-runner/
RUN ln -s /opt/trt-edge-runner/bin/trt-edge-run /opt/trt-edge-runner/bin/trt-edge-run-threads \
      /usr/local/bin/ \
 && trt-edge-run --help >/dev/null
