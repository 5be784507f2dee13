#include "stage.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <iostream>

namespace trt_edge::runner {
namespace {

// Read by the signal handler: a fixed buffer, never reallocated.
char g_stage[256] = "starting";
bool g_progress = false;
// The handler's own stack, so a stack overflow can still be reported.
alignas(16) char g_alt_stack[1 << 16];

void write_all(const char* text) {
  size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<size_t>(n);
  }
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
  }
  return "a fatal signal";
}

extern "C" void report_fatal_signal(int sig) {
  // Async-signal-safe only: write(2), signal(2), raise(3).
  write_all("trt-edge-run: fatal: ");
  write_all(signal_name(sig));
  write_all(" while ");
  write_all(g_stage);
  write_all("\n");
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void enter_stage(const std::string& stage) {
  const size_t n = std::min(stage.size(), sizeof g_stage - 1);
  std::memcpy(g_stage, stage.data(), n);
  g_stage[n] = '\0';
  if (g_progress) std::cerr << "trt-edge-run: progress: " << g_stage << std::endl;
}

void print_progress(bool on) { g_progress = on; }

void install_fatal_signal_report() {
  stack_t stack{};
  stack.ss_sp = g_alt_stack;
  stack.ss_size = sizeof g_alt_stack;
  ::sigaltstack(&stack, nullptr);
  struct sigaction action {};
  action.sa_handler = report_fatal_signal;
  action.sa_flags = SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::sigaction(sig, &action, nullptr);
}

}  // namespace trt_edge::runner
