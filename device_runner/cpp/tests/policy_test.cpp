// Unit tests for profile_policy.h beyond the shared vectors: the guard's rules
// (compile-time ones as static_asserts, runtime ones as checks), input
// validation and its messages. A plain program so it needs no test framework;
// it prints each failed check and exits nonzero.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "trt_edge/profile_policy.h"

using trt_edge::Dims;
using trt_edge::OptimizationProfileGuard;
using trt_edge::ProfileTable;
using trt_edge::Request;
using trt_edge::RequestKind;

// ---- compile-time rules ----------------------------------------------------
// bool is deleted so Guard(true) cannot become profile 1.
static_assert(!std::is_constructible_v<OptimizationProfileGuard, bool>);
// Every integer type works (the upstream int32_t-only ctor made int64_t ambiguous).
static_assert(std::is_constructible_v<OptimizationProfileGuard, int>);
static_assert(std::is_constructible_v<OptimizationProfileGuard, int64_t>);
static_assert(std::is_constructible_v<OptimizationProfileGuard, uint64_t>);
static_assert(std::is_constructible_v<OptimizationProfileGuard, size_t>);
static_assert(std::is_constructible_v<OptimizationProfileGuard, unsigned>);
static_assert(std::is_constructible_v<OptimizationProfileGuard, short>);
// Not floats, not pointers.
static_assert(!std::is_constructible_v<OptimizationProfileGuard, double>);
static_assert(!std::is_constructible_v<OptimizationProfileGuard, float>);
static_assert(!std::is_constructible_v<OptimizationProfileGuard, const char*>);
// Explicit: an int does not silently convert into a guard.
static_assert(!std::is_convertible_v<int, OptimizationProfileGuard>);
// Non-copyable and non-movable: a guard is tied to its scope.
static_assert(!std::is_copy_constructible_v<OptimizationProfileGuard>);
static_assert(!std::is_copy_assignable_v<OptimizationProfileGuard>);
static_assert(!std::is_move_constructible_v<OptimizationProfileGuard>);
static_assert(!std::is_move_assignable_v<OptimizationProfileGuard>);
static_assert(!std::is_default_constructible_v<OptimizationProfileGuard>);
// [[nodiscard]] on automatic() is checked by the nodiscard_probe ctest, which
// compiles a discarded call and expects the diagnostic.

namespace {

int failures = 0;

void check(bool ok, const char* what, int line) {
  if (!ok) {
    ++failures;
    std::printf("FAIL line %d: %s\n", line, what);
  }
}
#define CHECK(cond) check((cond), #cond, __LINE__)

bool is_default(const Request& r) { return r.kind == RequestKind::kDefault; }
bool is_pinned(const Request& r, int64_t i) { return r.kind == RequestKind::kPinned && r.index == i; }
bool is_auto(const Request& r) { return r.kind == RequestKind::kAuto; }

void guard_nesting_restores() {
  CHECK(is_default(trt_edge::current_request()));
  {
    OptimizationProfileGuard outer(1);
    CHECK(is_pinned(trt_edge::current_request(), 1));
    {
      auto inner = OptimizationProfileGuard::automatic();
      CHECK(is_auto(trt_edge::current_request()));
      CHECK(is_auto(inner.request()));
      {
        OptimizationProfileGuard innermost(int64_t{2});
        CHECK(is_pinned(trt_edge::current_request(), 2));
      }
      CHECK(is_auto(trt_edge::current_request()));
    }
    CHECK(is_pinned(trt_edge::current_request(), 1));
  }
  CHECK(is_default(trt_edge::current_request()));
}

void guard_restores_on_exception() {
  try {
    OptimizationProfileGuard g(3);
    CHECK(is_pinned(trt_edge::current_request(), 3));
    throw std::runtime_error("execution failed");
  } catch (const std::runtime_error&) {
  }
  CHECK(is_default(trt_edge::current_request()));
}

void guard_rejects_negative_index() {
  bool threw = false;
  try {
    OptimizationProfileGuard g(-1);
  } catch (const std::invalid_argument& e) {
    threw = std::string(e.what()).find("automatic()") != std::string::npos;
  }
  CHECK(threw);
  CHECK(is_default(trt_edge::current_request()));
}

void guard_accepts_unsigned_and_wide_types() {
  {
    OptimizationProfileGuard g(size_t{2});
    CHECK(is_pinned(trt_edge::current_request(), 2));
  }
  {
    OptimizationProfileGuard g(uint8_t{1});
    CHECK(is_pinned(trt_edge::current_request(), 1));
  }
  bool threw = false;
  try {
    OptimizationProfileGuard g(UINT64_MAX);
  } catch (const std::out_of_range&) {
    threw = true;
  }
  CHECK(threw);
}

void guards_are_thread_local() {
  // Two real threads hold different guards while both are alive; neither may see
  // the other's request, and the main thread stays Default throughout.
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::atomic<int> bad{0};
  auto worker = [&](int64_t index) {
    OptimizationProfileGuard g(index);
    ready.fetch_add(1);
    while (!go.load()) {
      std::this_thread::yield();
    }
    for (int i = 0; i < 10000; ++i) {
      if (!is_pinned(trt_edge::current_request(), index)) {
        bad.fetch_add(1);
      }
    }
  };
  auto auto_worker = [&]() {
    auto g = OptimizationProfileGuard::automatic();
    ready.fetch_add(1);
    while (!go.load()) {
      std::this_thread::yield();
    }
    for (int i = 0; i < 10000; ++i) {
      if (!is_auto(trt_edge::current_request())) {
        bad.fetch_add(1);
      }
    }
  };
  std::thread a(worker, 0), b(worker, 1), c(auto_worker);
  while (ready.load() < 3) {
    std::this_thread::yield();
  }
  CHECK(is_default(trt_edge::current_request()));
  go.store(true);
  a.join();
  b.join();
  c.join();
  CHECK(bad.load() == 0);
  CHECK(is_default(trt_edge::current_request()));
}

ProfileTable two_inputs_three_profiles() {
  ProfileTable t;
  t.bounds = {
      {{Dims{1, 1}, Dims{1, 1}}, {Dims{1, 1, 16}, Dims{1, 1, 16}}},
      {{Dims{1, 1}, Dims{1, 512}}, {Dims{1, 1, 16}, Dims{1, 512, 16}}},
      {{Dims{1, 512}, Dims{1, 2048}}, {Dims{1, 512, 16}, Dims{1, 2048, 16}}},
  };
  return t;
}

void check_inputs_names_input_dim_value_range() {
  const ProfileTable t = two_inputs_three_profiles();
  const std::vector<Dims> in{Dims{1, 300}, Dims{1, 300, 16}};
  CHECK(!trt_edge::check_inputs(t, 1, in));
  const auto v = trt_edge::check_inputs(t, 2, in);
  CHECK(v.kind == trt_edge::InputViolation::Kind::kExtent);
  CHECK(v.input == 0 && v.dim == 1 && v.value == 300 && v.min == 512 && v.max == 2048);
  const std::string msg = trt_edge::describe(v, 2, {"input_ids", "mask"});
  CHECK(msg.find("'input_ids' dim 1 = 300") != std::string::npos);
  CHECK(msg.find("[512, 2048]") != std::string::npos);

  const std::vector<Dims> bad_second{Dims{1, 300}, Dims{1, 300, 8}};
  const auto v2 = trt_edge::check_inputs(t, 1, bad_second);
  CHECK(v2.kind == trt_edge::InputViolation::Kind::kExtent && v2.input == 1 && v2.dim == 2);

  const std::vector<Dims> wrong_rank{Dims{1, 300, 1}, Dims{1, 300, 16}};
  const auto v3 = trt_edge::check_inputs(t, 1, wrong_rank);
  CHECK(v3.kind == trt_edge::InputViolation::Kind::kRank && v3.value == 3 && v3.min == 2);
  CHECK(trt_edge::check_inputs(t, 3, in).kind == trt_edge::InputViolation::Kind::kNoSuchProfile);
  const std::vector<Dims> three{Dims{1, 1}, Dims{1, 1, 16}, Dims{1}};
  CHECK(trt_edge::check_inputs(t, 0, three).kind ==
        trt_edge::InputViolation::Kind::kMissingBounds);
}

void no_match_message_lists_every_profile() {
  const ProfileTable t = two_inputs_three_profiles();
  const std::vector<Dims> in{Dims{1, 4096}, Dims{1, 4096, 16}};
  CHECK(trt_edge::select_profile(t, Request::automatic(), in).outcome ==
        trt_edge::Outcome::kNoProfileMatchesInputs);
  const std::string msg = trt_edge::describe_no_match(t, in, {"input_ids", "hidden"});
  CHECK(msg.find("input_ids=[1, 4096], hidden=[1, 4096, 16]") != std::string::npos);
  CHECK(msg.find("profile 0: input_ids [1, 1]; hidden [1, 1, 16]") != std::string::npos);
  CHECK(msg.find("profile 1: input_ids [1, 1..512]; hidden [1, 1..512, 16]") != std::string::npos);
  CHECK(msg.find("profile 2: input_ids [1, 512..2048]") != std::string::npos);
  CHECK(trt_edge::describe_no_match(ProfileTable{}, in).find("empty") != std::string::npos);
}

void selection_applies_the_guard_request() {
  // The order an engine follows: read the thread's request, select, validate.
  ProfileTable t = two_inputs_three_profiles();
  t.active = 0;
  const std::vector<Dims> in{Dims{1, 1000}, Dims{1, 1000, 16}};
  {
    auto g = OptimizationProfileGuard::automatic();
    const auto s = trt_edge::select_profile(t, trt_edge::current_request(), in);
    CHECK(s.outcome == trt_edge::Outcome::kOk && s.profile == 2);
    CHECK(!trt_edge::check_inputs(t, *s.profile, in));
  }
  {
    OptimizationProfileGuard g(1);
    const auto s = trt_edge::select_profile(t, trt_edge::current_request(), in);
    CHECK(s.outcome == trt_edge::Outcome::kOk && s.profile == 1);
    CHECK(static_cast<bool>(trt_edge::check_inputs(t, *s.profile, in)));
  }
}

void dims_reject_rank_above_eight() {
  bool threw = false;
  try {
    Dims d{1, 2, 3, 4, 5, 6, 7, 8, 9};
  } catch (const std::length_error&) {
    threw = true;
  }
  CHECK(threw);
}

}  // namespace

int main() {
  guard_nesting_restores();
  guard_restores_on_exception();
  guard_rejects_negative_index();
  guard_accepts_unsigned_and_wide_types();
  guards_are_thread_local();
  check_inputs_names_input_dim_value_range();
  selection_applies_the_guard_request();
  no_match_message_lists_every_profile();
  dims_reject_rank_above_eight();
  std::printf("%s (%d failed checks)\n", failures ? "FAILED" : "ok", failures);
  return failures ? 1 : 0;
}
