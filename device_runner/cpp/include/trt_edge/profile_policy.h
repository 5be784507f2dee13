// trt-edge profile policy, all of it: selection (profile_selection.h), the
// thread-local guard (profile_guard.h), input validation (input_check.h) and the
// per-bundle mode decision (mode_decision.h). Header-only and dependency-free (no
// TensorRT, CUDA or ExecuTorch); include the part you need, or this.
#pragma once

#include "trt_edge/input_check.h"
#include "trt_edge/mode_decision.h"
#include "trt_edge/profile_guard.h"
#include "trt_edge/profile_selection.h"
