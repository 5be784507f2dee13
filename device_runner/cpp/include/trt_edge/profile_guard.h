// trt-edge profile guard: the thread-local, scoped request an execution resolves.
//
// OptimizationProfileGuard only records a request for the calling thread and
// restores the enclosing one when it goes out of scope; it never sees an engine
// (each delegate, or the runner's emulation, reads current_request() in its own
// execute). Mirrors trt_edge_runner.guard; header-only, dependency-free. Same
// shape as upstream Torch-TensorRT's guard (int index, bool deleted,
// [[nodiscard]] automatic()), which the C++ runner's native actuator sets too.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "trt_edge/profile_selection.h"

namespace trt_edge {

namespace detail {
inline Request& thread_request() noexcept {
  thread_local Request request = Request::default_request();
  return request;
}

template <typename T>
inline constexpr bool is_index_type_v =
    std::is_integral_v<T> && !std::is_same_v<std::remove_cv_t<T>, bool>;
}  // namespace detail

/// The innermost request in scope on the calling thread (Default when none).
inline Request current_request() noexcept { return detail::thread_request(); }

/// Records a profile request for the calling thread and restores the enclosing one
/// when it goes out of scope. It never sees an engine: each delegate resolves
/// current_request() in its own execute(). Construct it on the executing thread.
///
///   trt_edge::OptimizationProfileGuard pin(1);                  // pin profile 1
///   auto pick = trt_edge::OptimizationProfileGuard::automatic(); // from shapes
///
/// Any integer type is accepted (int64_t, size_t, ... — not only int32_t, so no
/// overload is ambiguous); bool is deleted so `Guard(true)` cannot mean profile 1;
/// a negative index throws std::invalid_argument at construction, an index the
/// engine lacks is reported by select_profile when it executes.
class [[nodiscard]] OptimizationProfileGuard {
 public:
  template <typename Int, std::enable_if_t<detail::is_index_type_v<Int>, int> = 0>
  explicit OptimizationProfileGuard(Int index)
      : OptimizationProfileGuard(Request::pinned(checked_index(index))) {}

  OptimizationProfileGuard(bool) = delete;

  /// Shape-based (sticky first-fit) selection. [[nodiscard]]: a discarded guard
  /// is destroyed on the same line and would silently request nothing.
  [[nodiscard]] static OptimizationProfileGuard automatic() noexcept {
    return OptimizationProfileGuard(Request::automatic());
  }

  ~OptimizationProfileGuard() { detail::thread_request() = previous_; }

  OptimizationProfileGuard(const OptimizationProfileGuard&) = delete;
  OptimizationProfileGuard& operator=(const OptimizationProfileGuard&) = delete;
  OptimizationProfileGuard(OptimizationProfileGuard&&) = delete;
  OptimizationProfileGuard& operator=(OptimizationProfileGuard&&) = delete;

  /// The request this guard installed.
  Request request() const noexcept { return request_; }

 private:
  explicit OptimizationProfileGuard(Request request) noexcept
      : previous_(detail::thread_request()), request_(request) {
    detail::thread_request() = request;
  }

  template <typename Int>
  static int64_t checked_index(Int index) {
    if constexpr (std::is_signed_v<Int>) {
      if (index < 0) {
        throw std::invalid_argument(
            "OptimizationProfileGuard: profile index must be >= 0, got " + std::to_string(index) +
            "; use OptimizationProfileGuard::automatic() for shape-based selection");
      }
    } else if constexpr (sizeof(Int) >= sizeof(int64_t)) {
      if (index > static_cast<Int>(std::numeric_limits<int64_t>::max())) {
        throw std::out_of_range("OptimizationProfileGuard: profile index out of range");
      }
    }
    return static_cast<int64_t>(index);
  }

  Request previous_;
  Request request_;
};

}  // namespace trt_edge
