// Compiled by ctest, not built: discarding OptimizationProfileGuard::automatic()
// must draw a diagnostic (the guard would be destroyed on the same line and
// request nothing). With -DPROBE_KEEP_RESULT the same file must compile cleanly.
#include "trt_edge/profile_guard.h"

int main() {
#ifdef PROBE_KEEP_RESULT
  auto guard = trt_edge::OptimizationProfileGuard::automatic();
  return guard.request().kind == trt_edge::RequestKind::kAuto ? 0 : 1;
#else
  trt_edge::OptimizationProfileGuard::automatic();
  return 0;
#endif
}
