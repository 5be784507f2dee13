#include "serve_slots.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <new>

#include "generate.h"
#include "generation_state.h"
#include "stage.h"
#include "token_generator.h"

namespace trt_edge::runner::cli {
namespace {

using clock_type = std::chrono::steady_clock;
using serve::RequestError;

/// A generate request holding a slot: where it is (prompt chunks left, the next position to
/// write), what comes next (prefill, sample its logits row, or feed its last token) and its
/// own sampler and stop rule.
struct Conversation {
  enum class Next { kPrefill, kSample, kFeed };

  Job job;
  GenerationRequest request;
  Sampler sampler;
  StopRule rule;
  GenerationResult stats;
  std::vector<int64_t> seen;    ///< prompt and tokens made: the repetition penalty's history
  std::vector<int64_t> chunks;  ///< the prompt calls' sizes (prefill_chunks)
  size_t next_chunk = 0;
  int64_t position = 0;  ///< the next cache position to write
  Next next = Next::kPrefill;
  std::vector<float> row;  ///< kSample: the logits of the next token
  int64_t admitted = 0;    ///< admission order: the oldest prompt is prefilled first
  /// Admission: the done event's timings count from here (docs/engine-protocol.md, slots).
  clock_type::time_point started = clock_type::now();

  Conversation(Job j, const GenerationPlan& plan)
      : job(std::move(j)),
        request(job.request.generate),
        sampler(request.sampling),
        rule(stop_rule_for(plan, request)) {}

  double seconds() const {
    return std::chrono::duration<double>(clock_type::now() - started).count();
  }
};

/// One of the program's KV caches: the tokens it holds, when it was last used, who holds it.
struct Slot {
  std::vector<int64_t> cached;
  uint64_t last_used = 0;
  std::unique_ptr<Conversation> conversation;
};

std::string generation_field(const RunnerError& e) {
  const std::string message = e.what();
  return message.rfind("max_new_tokens", 0) == 0 ? "max_new_tokens" : "prompt_ids";
}

class SlotLoop {
 public:
  SlotLoop(ProfiledModule& module, const GenerationPlan& plan, Queue& queue, EventWriter& out)
      : plan_(plan),
        state_(module, plan),
        queue_(queue),
        out_(out),
        slots_(static_cast<size_t>(plan.slots)) {}

  void run(const std::function<void(Job&)>& run_alone) {
    for (;;) {
      const uint64_t seen = queue_.activity();
      if (out_.gone()) queue_.cancel_all();
      answer_cancelled();
      admit();
      if (!held_.empty() && busy() == 0) {
        run_alone(held_.front());
        held_.pop_front();
        for (Slot& slot : slots_) slot.cached.clear();
        enter_stage("serving");
        continue;
      }
      if (busy() == 0) {
        std::optional<Job> job = queue_.pop();  // idle: block for the next request or the end
        if (!job) return;
        start(std::move(*job));
        continue;
      }
      finish_cancelled();
      bool progressed = prefill_chunk();
      progressed = sample_ready() || progressed;
      progressed = decode_step() || progressed;
      progressed = sample_ready() || progressed;
      if (!progressed) queue_.wait_activity(seen, std::chrono::milliseconds(200));
    }
  }

 private:
  size_t busy() const {
    return static_cast<size_t>(std::count_if(
        slots_.begin(), slots_.end(), [](const Slot& s) { return s.conversation != nullptr; }));
  }

  /// Requests cancelled while they waited (in the queue or held for running alone) get their
  /// error now: waiting for a free slot could take as long as the longest stream.
  void answer_cancelled() {
    for (Job& job : queue_.take_cancelled()) {
      fail(job, "cancelled", "cancelled before it started", "");
    }
    for (auto it = held_.begin(); it != held_.end();) {
      if (*it->cancelled) {
        fail(*it, "cancelled", "cancelled before it started", "");
        it = held_.erase(it);
      } else {
        ++it;
      }
    }
  }

  /// Queued requests into free slots, in order; an infer stops admission until it has run.
  void admit() {
    while (held_.empty() && busy() < slots_.size()) {
      std::optional<Job> job = queue_.try_pop();
      if (!job) return;
      start(std::move(*job));
    }
  }

  void start(Job job) {
    const ServeRequest& r = job.request;
    if (r.op != serve::Op::kGenerate) {
      held_.push_back(std::move(job));
      return;
    }
    if (*job.cancelled) {
      fail(job, "cancelled", "cancelled before it started", "");
      return;
    }
    try {
      check_generation_request(plan_, r.generate.prompt, r.generate.max_new_tokens,
                               RequestFlags{"prompt_ids", "max_new_tokens", false});
    } catch (const RunnerError& e) {
      fail(job, to_string(e.kind()), e.what(), generation_field(e));
      return;
    }
    if (r.constrained && !r.stream) {
      fail(job,
           "usage",
           "constrained: needs stream: true (the client reads each token to send the next mask)",
           "constrained");
      return;
    }
    std::vector<SlotView> views;
    for (const Slot& s : slots_) {
      views.push_back(SlotView{&s.cached, s.last_used, s.conversation != nullptr});
    }
    const SlotChoice choice = choose_slot(views, r.generate.prompt, r.generate.reuse_prefix);
    Slot& slot = slots_[choice.slot];
    auto c = std::make_unique<Conversation>(std::move(job), plan_);
    const auto prompt = static_cast<int64_t>(c->request.prompt.size());
    c->stats.prompt_ids = c->request.prompt;
    c->stats.reused_prompt_tokens = choice.reused;
    c->seen = c->request.prompt;
    c->chunks = prefill_chunks(prompt - choice.reused, plan_.prefill_low, plan_.prefill_high);
    c->position = choice.reused;
    c->admitted = ++admissions_;
    slot.cached.resize(static_cast<size_t>(choice.reused));
    slot.last_used = ++tick_;
    slot.conversation = std::move(c);
  }

  /// One prompt chunk of the oldest request still prefilling (batch 1).
  bool prefill_chunk() {
    Slot* oldest = nullptr;
    for (Slot& s : slots_) {
      if (s.conversation && s.conversation->next == Conversation::Next::kPrefill &&
          (!oldest || s.conversation->admitted < oldest->conversation->admitted)) {
        oldest = &s;
      }
    }
    if (!oldest) return false;
    Conversation& c = *oldest->conversation;
    const int64_t size = c.chunks[c.next_chunk];
    const char* phase =
        plan_.prefill_low <= size && size <= plan_.prefill_high ? kPrefillPhase : kDecodePhase;
    const auto first = c.request.prompt.begin() + c.position;
    GenerationState::Row row{std::vector<int64_t>(first, first + size), c.position,
                             slot_of(*oldest)};
    enter_stage("serving request " + c.job.request.id);
    std::vector<Slot*> rows{oldest};
    std::optional<GenerationState::RowsCall> call = run_call(phase, {row}, rows);
    if (!call) return true;
    oldest->cached.insert(oldest->cached.end(), row.ids.begin(), row.ids.end());
    c.stats.steps.push_back(
        GenerationStep{phase, call->profile, c.position, size, round_ms(call->ms)});
    c.position += size;
    if (++c.next_chunk == c.chunks.size()) {
      c.row = logits_row(call->logits, 0);
      c.next = Conversation::Next::kSample;
    }
    return true;
  }

  /// Every request whose logits are there and (constrained) whose mask has come: sampled.
  bool sample_ready() {
    bool any = false;
    for (Slot& s : slots_) {
      if (s.conversation && s.conversation->next == Conversation::Next::kSample) {
        any = sample(s) || any;
      }
    }
    return any;
  }

  bool sample(Slot& slot) {
    Conversation& c = *slot.conversation;
    const ServeRequest& r = c.job.request;
    const auto index = static_cast<int64_t>(c.stats.tokens.size());
    std::optional<std::vector<uint32_t>> allowed;
    if (r.constrained) {
      std::optional<serve::MaskRequest> mask = queue_.take_mask(r.id);
      if (!mask) {
        // No mask can come once the input ended or the request was cancelled.
        if (queue_.closed() || *c.job.cancelled || out_.gone()) {
          finish(slot, "cancelled");
          return true;
        }
        return false;
      }
      try {
        allowed = checked_mask(std::move(*mask), index, plan_.vocab_size);
      } catch (const RequestError& e) {
        fail(c.job, e.kind(), e.what(), e.field());
        free(slot);
        return true;
      }
    }
    const int64_t token =
        sample_token(c.sampler, std::move(c.row), c.seen, allowed ? &*allowed : nullptr);
    if (c.stats.tokens.empty()) c.stats.first_token_s = c.seconds();
    c.stats.tokens.push_back(token);
    c.seen.push_back(token);
    if (r.stream) {
      out_.write(Json{{"id", r.id}, {"event", "token"}, {"index", index}, {"token", token}});
    }
    const size_t made = c.stats.tokens.size();
    if (const char* stop = stop_reason(c.rule, token, made, c.position, plan_.max_cache_len)) {
      finish(slot, stop);
    } else if (*c.job.cancelled || out_.gone()) {
      finish(slot, "cancelled");
    } else {
      c.next = Conversation::Next::kFeed;
    }
    return true;
  }

  /// One decode step: each decoding request's last token, all in one batch (calls of at most
  /// the decode profile's max batch), rows in slot order.
  bool decode_step() {
    std::vector<Slot*> feeding;
    for (Slot& s : slots_) {
      if (s.conversation && s.conversation->next == Conversation::Next::kFeed) {
        feeding.push_back(&s);
      }
    }
    if (feeding.empty()) return false;
    const auto most = static_cast<size_t>(std::max<int64_t>(plan_.decode_batch_max, 1));
    enter_stage("serving " + std::to_string(feeding.size()) + " requests");
    for (size_t from = 0; from < feeding.size(); from += most) {
      const size_t to = std::min(feeding.size(), from + most);
      std::vector<Slot*> group(feeding.begin() + static_cast<std::ptrdiff_t>(from),
                               feeding.begin() + static_cast<std::ptrdiff_t>(to));
      std::vector<GenerationState::Row> rows;
      for (Slot* s : group) {
        const Conversation& c = *s->conversation;
        rows.push_back(GenerationState::Row{{c.stats.tokens.back()}, c.position, slot_of(*s)});
      }
      std::optional<GenerationState::RowsCall> call = run_call(kDecodePhase, rows, group);
      if (!call) continue;
      for (size_t k = 0; k < group.size(); ++k) {
        Slot& s = *group[k];
        Conversation& c = *s.conversation;
        s.cached.push_back(rows[k].ids.front());
        c.stats.steps.push_back(
            GenerationStep{kDecodePhase, call->profile, c.position, 1, round_ms(call->ms)});
        c.position += 1;
        c.row = logits_row(call->logits, static_cast<int64_t>(k));
        c.next = Conversation::Next::kSample;
      }
    }
    return true;
  }

  /// The call, or nullopt after failing every request of `rows` (their caches forgotten).
  std::optional<GenerationState::RowsCall> run_call(const char* phase,
                                                    const std::vector<GenerationState::Row>& rows,
                                                    const std::vector<Slot*>& slots) {
    for (Slot* s : slots) s->cached.resize(static_cast<size_t>(s->conversation->position));
    try {
      return state_.call_rows(phase, rows);
    } catch (const RunnerError& e) {
      for (Slot* s : slots) {
        const std::string field = e.input().empty() ? "" : "inputs";
        fail(s->conversation->job, to_string(e.kind()), e.what(), field);
        s->cached.clear();
        free(*s);
      }
    } catch (const std::bad_alloc&) {
      for (Slot* s : slots) {
        fail(s->conversation->job, "internal", "out of memory", "");
        s->cached.clear();
        free(*s);
      }
    } catch (const std::exception& e) {
      // As Engine::run: any other failure fails these rows, never the whole engine (an
      // exception out of the loop would end the process and every stream with it).
      for (Slot* s : slots) {
        fail(s->conversation->job, "internal", e.what(), "");
        s->cached.clear();
        free(*s);
      }
    }
    return std::nullopt;
  }

  void finish_cancelled() {
    for (Slot& s : slots_) {
      if (s.conversation && (*s.conversation->job.cancelled || out_.gone())) finish(s, "cancelled");
    }
  }

  /// The request in `slot` ends with `stop`: its done event, then the slot is free.
  void finish(Slot& slot, const char* stop) {
    Conversation& c = *slot.conversation;
    c.stats.stop = stop;
    c.stats.total_s = c.seconds();
    queue_.finish(c.job.request.id);
    out_.write(generate_done_event(c.job.request.id, c.stats));
    free(slot);
  }

  void free(Slot& slot) {
    slot.conversation.reset();
    slot.last_used = ++tick_;
  }

  void fail(const Job& job, const std::string& kind, const std::string& message,
            const std::string& field) {
    queue_.finish(job.request.id);
    out_.write(error_event(job.request.id, kind, message, field));
  }

  int64_t slot_of(const Slot& s) const { return static_cast<int64_t>(&s - slots_.data()); }

  const GenerationPlan& plan_;
  GenerationState state_;
  Queue& queue_;
  EventWriter& out_;
  std::vector<Slot> slots_;
  std::deque<Job> held_;  ///< requests that run alone (infer), waiting for the slots to empty
  uint64_t tick_ = 0;
  int64_t admissions_ = 0;
};

}  // namespace

void serve_slots(ProfiledModule& module, const GenerationPlan& plan, Queue& queue,
                 EventWriter& out, const std::function<void(Job&)>& run_alone) {
  SlotLoop(module, plan, queue, out).run(run_alone);
}

}  // namespace trt_edge::runner::cli
