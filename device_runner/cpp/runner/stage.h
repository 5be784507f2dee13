// Where trt-edge-run is in its work, for whoever watches it die.
//
// A parent process (the device agent) runs trt-edge-run as a child because a
// malformed program can crash ExecuTorch's loader or kernels (it does not harden
// itself against every bad input). To say *what* was running when the child died,
// each stage is named: with --progress as a line `trt-edge-run: progress: STAGE` on
// stderr (written before the stage starts, so the last one names the stage that
// did not finish, even after SIGKILL or a timeout), and always in the line a fatal
// signal prints (`trt-edge-run: fatal: SIGSEGV while STAGE`) before the process
// dies of that same signal — the parent still sees the signal, nothing is hidden.
#pragma once

#include <string>

namespace trt_edge::runner {

/// Names the stage about to start ("loading model.pte", "running phase decode").
void enter_stage(const std::string& stage);

/// Print `trt-edge-run: progress: STAGE` lines from now on (off by default).
void print_progress(bool on);

/// Install the fatal-signal report (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT).
void install_fatal_signal_report();

}  // namespace trt_edge::runner
