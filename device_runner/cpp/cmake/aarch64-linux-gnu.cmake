# Cross-compiling device_runner/cpp for aarch64 Linux (Jetson CPUs) on an x86_64
# Debian host with g++-aarch64-linux-gnu (make device-aarch64 drives it through
# device_runner/cpp/tools/build_device_tarball.py).
#
#   cmake -S device_runner/cpp -B device_runner/cpp/build-aarch64 \
#     -DCMAKE_TOOLCHAIN_FILE=device_runner/cpp/cmake/aarch64-linux-gnu.cmake \
#     -DTRT_EDGE_AARCH64_SYSROOT=DIR \
#     -Dexecutorch_DIR=SDK/executorch/share/cmake
#
# TRT_EDGE_AARCH64_SYSROOT holds the arm64 OpenSSL (libssl-dev:arm64 and
# libssl3:arm64 unpacked with dpkg-deb -x, never installed: installing them would
# upgrade the host's libssl). executorch_DIR points into the aarch64 executorch
# wheel, unpacked: its C++ SDK is what the runner links. nlohmann-json is header
# only, so the host's copy serves (packages may come from the host's root).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# try_compile projects re-read this file: hand them the sysroot too.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TRT_EDGE_AARCH64_SYSROOT)
if(NOT TRT_EDGE_AARCH64_SYSROOT)
  set(TRT_EDGE_AARCH64_SYSROOT "$ENV{TRT_EDGE_AARCH64_SYSROOT}")
endif()
if(NOT TRT_EDGE_AARCH64_SYSROOT OR NOT EXISTS "${TRT_EDGE_AARCH64_SYSROOT}/usr/include/openssl")
  message(FATAL_ERROR
          "aarch64 toolchain: TRT_EDGE_AARCH64_SYSROOT='${TRT_EDGE_AARCH64_SYSROOT}' holds no "
          "arm64 OpenSSL (usr/include/openssl). Let `make device-aarch64` prepare it, or unpack "
          "`apt-get download libssl-dev:arm64 libssl3:arm64` with `dpkg-deb -x` into a directory "
          "and pass it as -DTRT_EDGE_AARCH64_SYSROOT=DIR.")
endif()

# Libraries and headers from the cross toolchain's root and the private sysroot
# only, never from the host's /usr; programs (cmake, python) from the host.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu "${TRT_EDGE_AARCH64_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# Debian keeps the per-architecture opensslconf.h / configuration.h here.
set(CMAKE_CXX_FLAGS_INIT "-isystem ${TRT_EDGE_AARCH64_SYSROOT}/usr/include/aarch64-linux-gnu")

# ctest runs the aarch64 test binaries under qemu user-mode emulation (called
# explicitly: binfmt_misc may be unavailable), with the cross toolchain's libc.
find_program(TRT_EDGE_QEMU_AARCH64 qemu-aarch64-static)
if(TRT_EDGE_QEMU_AARCH64)
  # Test binaries run from the build tree, not the tarball: the arm64 libcrypto (private
  # sysroot) and the aarch64 ExecuTorch SDK libraries are found through LD_LIBRARY_PATH.
  set(_trt_edge_guest_libs "${TRT_EDGE_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu")
  if(executorch_DIR)
    get_filename_component(_trt_edge_sdk_lib "${executorch_DIR}/../../lib" ABSOLUTE)
    string(APPEND _trt_edge_guest_libs ":${_trt_edge_sdk_lib}")
  endif()
  set(CMAKE_CROSSCOMPILING_EMULATOR
      "${TRT_EDGE_QEMU_AARCH64};-L;/usr/aarch64-linux-gnu;-E;LD_LIBRARY_PATH=${_trt_edge_guest_libs}")
endif()
