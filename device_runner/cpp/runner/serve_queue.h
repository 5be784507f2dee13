// What the two threads of `trt-edge-run --serve` share (job_serve.cpp): the event writer,
// the queue of requests with their cancel flags and the masks of constrained generations.
// One engine loop reads them: one request at a time (job_serve.cpp), or several in the
// slots of one program (serve_slots.cpp).
#pragma once

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "documents.h"
#include "generation_stats.h"
#include "sampler.h"
#include "serve_protocol.h"

namespace trt_edge::runner::cli {

using serve::ServeRequest;

/// Writes one event per line, whole, from either thread; notes a parent gone away.
class EventWriter {
 public:
  void write(const Json& event) {
    const std::string line = dumped(event) + "\n";
    std::lock_guard<std::mutex> lock(mutex_);
    if (gone_) return;
    size_t left = line.size();
    const char* p = line.data();
    while (left > 0) {
      const ssize_t n = ::write(STDOUT_FILENO, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        gone_ = true;
        return;
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  bool gone() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return gone_;
  }

 private:
  mutable std::mutex mutex_;
  bool gone_ = false;
};

inline Json error_event(const std::optional<std::string>& id, const std::string& kind,
                 const std::string& message, const std::string& field) {
  Json error{{"kind", kind}, {"message", message}};
  if (!field.empty()) error["field"] = field;
  return Json{{"id", id ? Json(*id) : Json(nullptr)}, {"event", "error"}, {"error", error}};
}

/// A queued or running request and its cancel flag.
struct Job {
  ServeRequest request;
  std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
};

/// What the reader hands the engine: jobs in order, the masks of constrained generations,
/// then the end (EOF or shutdown).
class Queue {
 public:
  /// false when `id` is already in flight (queued or running).
  bool push(Job job) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (flags_.count(job.request.id)) return false;
    flags_[job.request.id] = job.cancelled;
    jobs_.push_back(std::move(job));
    ready_.notify_one();
    touch();
    return true;
  }
  void close(std::optional<ServeRequest> shutdown) {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    shutdown_ = std::move(shutdown);
    ready_.notify_one();
    mask_ready_.notify_all();
    touch();
  }
  /// Keeps `mask` for its target if that is in flight; a mask for a request already finished
  /// (it stopped at eos while the client sent the next mask) is dropped, not an error.
  void deliver(serve::MaskRequest mask) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!flags_.count(mask.target)) return;
    const std::string target = mask.target;
    masks_[target].push_back(std::move(mask));
    mask_ready_.notify_all();
    touch();
  }
  /// The next mask for `id`, waiting for it; nullopt once `id` is cancelled, the input has
  /// ended (no mask can come) or `gone()` (the parent stopped reading).
  std::optional<serve::MaskRequest> await_mask(const std::string& id,
                                               const std::function<bool()>& gone) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      auto it = masks_.find(id);
      if (it != masks_.end() && !it->second.empty()) {
        serve::MaskRequest mask = std::move(it->second.front());
        it->second.pop_front();
        return mask;
      }
      auto flag = flags_.find(id);
      if (closed_ || flag == flags_.end() || *flag->second || gone()) return std::nullopt;
      // Woken by a mask, a cancel or the end; the timeout only rechecks `gone`.
      mask_ready_.wait_for(lock, std::chrono::milliseconds(200));
    }
  }
  /// While held (the reader is handing over the lines of one read), no job is popped: the
  /// requests that arrived together are admitted together (a slots engine starts them in the
  /// same turn, whatever the threads' timing).
  void hold() {
    std::lock_guard<std::mutex> lock(mutex_);
    held_ = true;
  }
  void release() {
    std::lock_guard<std::mutex> lock(mutex_);
    held_ = false;
    ready_.notify_one();
    touch();
  }
  /// The next job; nullopt once closed and drained.
  std::optional<Job> pop() {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [&] { return (!jobs_.empty() && !held_) || closed_; });
    if (jobs_.empty()) return std::nullopt;
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    return job;
  }
  /// Marks `id` cancelled if it is in flight.
  void cancel(const std::string& id) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = flags_.find(id);
    if (it != flags_.end()) *it->second = true;
    mask_ready_.notify_all();
    touch();
  }
  /// Every job in flight: the parent is gone.
  void cancel_all() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [id, flag] : flags_) *flag = true;
    mask_ready_.notify_all();
    touch();
  }
  /// `id` is finished: forgotten before its terminal event, so the id is free again when
  /// the client reads that event.
  void finish(const std::string& id) {
    std::lock_guard<std::mutex> lock(mutex_);
    flags_.erase(id);
    masks_.erase(id);
  }
  /// The next job if one waits (the slots loop admits without blocking); nullopt otherwise.
  std::optional<Job> try_pop() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (jobs_.empty() || held_) return std::nullopt;
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    return job;
  }
  /// The queued jobs cancelled before they started, taken out of the queue: the slots loop
  /// answers them at once, not when a slot frees (the slots may stay busy for a long time).
  std::vector<Job> take_cancelled() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<Job> cancelled;
    for (auto it = jobs_.begin(); it != jobs_.end();) {
      if (*it->cancelled) {
        cancelled.push_back(std::move(*it));
        it = jobs_.erase(it);
      } else {
        ++it;
      }
    }
    return cancelled;
  }
  /// The next mask for `id` if it has arrived (the slots loop samples a constrained row only
  /// then); nullopt otherwise.
  std::optional<serve::MaskRequest> take_mask(const std::string& id) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = masks_.find(id);
    if (it == masks_.end() || it->second.empty()) return std::nullopt;
    serve::MaskRequest mask = std::move(it->second.front());
    it->second.pop_front();
    return mask;
  }
  /// Whether the input has ended (no job and no mask can come any more).
  bool closed() {
    std::lock_guard<std::mutex> lock(mutex_);
    return closed_;
  }
  /// Waits until something arrives (a job, a mask, a cancel, the end) after `seen`, the
  /// count activity() returned, or `timeout` passes (to recheck a parent gone away).
  void wait_activity(uint64_t seen, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    activity_cv_.wait_for(lock, timeout, [&] { return activity_ != seen; });
  }
  /// How many things have arrived so far (wait_activity's `seen`).
  uint64_t activity() {
    std::lock_guard<std::mutex> lock(mutex_);
    return activity_;
  }
  std::optional<ServeRequest> shutdown() {
    std::lock_guard<std::mutex> lock(mutex_);
    return shutdown_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::condition_variable mask_ready_;
  std::deque<Job> jobs_;
  std::map<std::string, std::shared_ptr<std::atomic<bool>>> flags_;
  std::map<std::string, std::deque<serve::MaskRequest>> masks_;
  bool closed_ = false;
  bool held_ = false;
  std::optional<ServeRequest> shutdown_;
  std::condition_variable activity_cv_;
  uint64_t activity_ = 0;

  /// Under mutex_: something arrived.
  void touch() {
    ++activity_;
    activity_cv_.notify_all();
  }
};

/// The allowed ids of `mask` for token `index` of a vocabulary of `vocab` ids; a mask for
/// another index, of another size than the vocabulary's bitset or allowing no token is a
/// RequestError naming the field (it fails that generation).
inline std::vector<uint32_t> checked_mask(serve::MaskRequest mask, int64_t index, int64_t vocab) {
  if (mask.index != index) {
    throw serve::RequestError("usage",
                              "mask.index: " + std::to_string(mask.index) + " given; token " +
                                  std::to_string(index) + " is the next to sample",
                              "mask.index");
  }
  const auto words = static_cast<size_t>((vocab + 31) / 32);
  if (mask.allowed.size() != words) {
    throw serve::RequestError("usage",
                              "mask.allowed: " + std::to_string(mask.allowed.size()) +
                                  " words; the vocabulary (" + std::to_string(vocab) +
                                  " ids) needs " + std::to_string(words),
                              "mask.allowed");
  }
  bool any = false;
  for (int64_t k = 0; k < vocab && !any; ++k) any = token_allowed(mask.allowed, k);
  if (!any) {
    throw serve::RequestError("usage", "mask.allowed: allows no token of the vocabulary",
                              "mask.allowed");
  }
  return std::move(mask.allowed);
}

/// The `done` event of generate request `id` (docs/engine-protocol.md).
inline Json generate_done_event(const std::string& id, const GenerationResult& result) {
  return Json{{"id", id},
              {"event", "done"},
              {"tokens", result.tokens},
              {"stop", result.stop},
              {"usage",
               Json{{"prompt_tokens", static_cast<int64_t>(result.prompt_ids.size())},
                    {"completion_tokens", static_cast<int64_t>(result.tokens.size())},
                    {"reused_prompt_tokens", result.reused_prompt_tokens}}},
              {"steps", steps_json(result)},
              {"timings", result.timings()}};
}

}  // namespace trt_edge::runner::cli
