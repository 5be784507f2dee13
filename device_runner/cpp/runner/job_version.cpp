#include <algorithm>
#include <iomanip>
#include <iostream>

#include "documents.h"
#include "jobs.h"

#ifndef TRT_EDGE_RUNNER_VERSION
#define TRT_EDGE_RUNNER_VERSION "unknown"
#endif
#ifndef TRT_EDGE_EXECUTORCH_VERSION
#define TRT_EDGE_EXECUTORCH_VERSION "unknown"
#endif

namespace trt_edge::runner::cli {

int print_version(const Options& o) {
  const Json facts = runner_facts();
  if (o.json) {
    Json doc{{"interface", kInterfaceVersion}, {"ok", true}, {"runner", facts}};
    std::cout << dumped(doc) << "\n";
    return 0;
  }
  std::cout << "trt-edge-run " << TRT_EDGE_RUNNER_VERSION << " (" << compiled_arch()
            << ", ExecuTorch " << TRT_EDGE_EXECUTORCH_VERSION << ", interface " << kInterfaceVersion
            << "; native TensorRT profile guard: " << (native_actuator_available() ? "yes" : "no")
            << ")\n";
  return 0;
}

}  // namespace trt_edge::runner::cli
