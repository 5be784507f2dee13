// trt_edge_policy_bench: per-call cost of guard + select_profile + check_inputs
// for a 2-input, 3-profile table (benchmarks/bench_policy.py runs it and prints
// it next to the Python figure). Prints one JSON object: median ns per call for
// a pinned and an auto request, over `batches` batches of `calls` calls each.
// Timed in thread CPU time (CLOCK_THREAD_CPUTIME_ID), like the Python side
// (time.thread_time), so time the OS gives to other processes on a shared
// machine does not count.
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "trt_edge/profile_policy.h"

namespace {

using trt_edge::Dims;

trt_edge::ProfileTable table() {
  trt_edge::ProfileTable t;
  t.bounds = {
      {{Dims{1, 1}, Dims{1, 1}}, {Dims{1, 1, 16}, Dims{1, 1, 16}}},
      {{Dims{1, 1}, Dims{1, 512}}, {Dims{1, 1, 16}, Dims{1, 512, 16}}},
      {{Dims{1, 512}, Dims{1, 2048}}, {Dims{1, 512, 16}, Dims{1, 2048, 16}}},
  };
  return t;
}

// Keeps the compiler from deleting or hoisting the measured work.
volatile int64_t g_sink = 0;
volatile int64_t g_seq = 300;

double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

template <typename Body>
double median_ns(int batches, int calls, Body body) {
  std::vector<double> per_call;
  per_call.reserve(static_cast<size_t>(batches));
  for (int b = 0; b < batches; ++b) {
    const double t0 = thread_cpu_ns();
    for (int i = 0; i < calls; ++i) {
      body();
    }
    per_call.push_back((thread_cpu_ns() - t0) / calls);
  }
  std::sort(per_call.begin(), per_call.end());
  return per_call[per_call.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int batches = argc > 1 ? std::atoi(argv[1]) : 51;
  const int calls = argc > 2 ? std::atoi(argv[2]) : 20000;
  if (batches <= 0 || calls <= 0) {
    std::fprintf(stderr, "usage: %s [batches>0] [calls>0]\n", argv[0]);
    return 2;
  }
  trt_edge::ProfileTable t = table();
  t.active = 1;
  auto run = [&t]() {
    Dims in[2] = {Dims{1, g_seq}, Dims{1, g_seq, 16}};
    const trt_edge::Selection s =
        trt_edge::select_profile(t, trt_edge::current_request(), in, 2);
    if (!s.profile || trt_edge::check_inputs(t, *s.profile, in, 2)) {
      std::abort();  // the benchmark's inputs always fit profile 1
    }
    t.active = *s.profile;
    g_sink = g_sink + *s.profile;
  };
  const double pinned = median_ns(batches, calls, [&]() {
    trt_edge::OptimizationProfileGuard guard(1);
    run();
  });
  const double automatic = median_ns(batches, calls, [&]() {
    auto guard = trt_edge::OptimizationProfileGuard::automatic();
    run();
  });
  std::printf("{\"pinned_ns\": %.1f, \"auto_ns\": %.1f, \"batches\": %d, \"calls\": %d}\n",
              pinned, automatic, batches, calls);
  return 0;
}
