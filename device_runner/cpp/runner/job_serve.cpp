// --serve: the engine of the device service (docs/engine-protocol.md). The bundle is opened,
// verified and loaded once (main.cpp's run, as for every job); then requests arrive as JSON
// lines on stdin and events leave as JSON lines on stdout, each flushed.
//
// Two threads. The reader reads stdin continuously: it parses each line (a malformed one is
// answered at once, naming the field), answers `ping` and `cancel` itself — so a cancel
// reaches a generation between two tokens — and queues the rest. The engine (this thread)
// runs the queue in order, one request at a time: one loaded method, one KV cache, kept
// between requests for prefix reuse — or, on a slots program (llm version 3), up to N
// requests at once with continuous batching (serve_slots.h). A request's failure is an error event; the engine
// keeps serving. A constrained generation waits, before each token, for the `mask` the
// reader hands it (the client runs the grammar; the engine sets the ids it refuses to -inf
// before sampling). End of input or `shutdown`: the requests already read are answered, then
// exit 0. A parent that stops reading (stdout closed) cancels the generation in progress.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "base64.h"
#include "documents.h"
#include "jobs.h"
#include "process_memory.h"
#include "serve_protocol.h"
#include "serve_queue.h"
#include "serve_slots.h"
#include "stage.h"

namespace trt_edge::runner::cli {
namespace {

using serve::Op;
using serve::RequestError;
using serve::ServeRequest;

/// The version of the protocol's events (the ready event's "interface").
constexpr int kProtocolVersion = 2;

/// Holds the queue for the lines of one read (Queue::hold), released however the scope ends.
class HeldQueue {
 public:
  explicit HeldQueue(Queue& queue) : queue_(queue) { queue_.hold(); }
  ~HeldQueue() { queue_.release(); }
  HeldQueue(const HeldQueue&) = delete;
  HeldQueue& operator=(const HeldQueue&) = delete;

 private:
  Queue& queue_;
};

/// The reader thread: lines from stdin (each at most `cap` bytes) until EOF or shutdown.
void read_requests(Queue& queue, EventWriter& out, size_t cap) {
  std::string line;
  bool too_long = false;
  char buffer[1 << 16];
  auto handle = [&](const std::string& text) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) return true;  // blank line
    try {
      ServeRequest r = serve::parse_request(text);
      switch (r.op) {
        case Op::kPing: {
          const auto rss = rss_bytes();
          out.write(Json{{"id", r.id}, {"event", "done"}, {"rss_bytes", rss ? Json(*rss) : Json(nullptr)}});
          return true;
        }
        case Op::kCancel:
          queue.cancel(r.target);
          out.write(Json{{"id", r.id}, {"event", "done"}});
          return true;
        case Op::kMask: {
          const std::string id = r.id;
          queue.deliver(std::move(r.mask));
          out.write(Json{{"id", id}, {"event", "done"}});
          return true;
        }
        case Op::kShutdown:
          queue.close(std::move(r));
          return false;
        default: {
          const std::string id = r.id;
          if (!queue.push(Job{std::move(r)})) {
            out.write(error_event(id, "protocol",
                                  "id: '" + id + "' is already in flight; ids must be unique "
                                  "among the requests in flight",
                                  "id"));
          }
          return true;
        }
      }
    } catch (const RequestError& e) {
      out.write(error_event(e.id, e.kind(), e.what(), e.field()));
    } catch (const std::exception& e) {
      out.write(error_event(std::nullopt, "internal", e.what(), ""));
    }
    return true;
  };
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    HeldQueue held(queue);  // the lines of one read reach the engine together
    for (ssize_t i = 0; i < n; ++i) {
      const char c = buffer[i];
      if (c != '\n') {
        if (line.size() < cap) {
          line += c;
        } else {
          too_long = true;
        }
        continue;
      }
      if (too_long) {
        out.write(error_event(std::nullopt, "protocol",
                              "a request line exceeds " + std::to_string(cap) +
                                  " bytes (--max-request-bytes); it was not read",
                              ""));
      } else if (!handle(line)) {
        return;
      }
      line.clear();
      too_long = false;
    }
  }
  if (!line.empty() && !too_long) handle(line);  // a last line without its newline
  queue.close(std::nullopt);
}

Json tensor_specs(const std::vector<TensorSpec>& specs) {
  Json out = Json::array();
  for (const auto& s : specs) {
    Json shape = Json::array();
    for (const auto& d : s.shape) {
      if (std::holds_alternative<int64_t>(d)) {
        shape.push_back(std::get<int64_t>(d));
      } else {
        shape.push_back(std::get<std::string>(d));
      }
    }
    out.push_back(Json{{"name", s.name}, {"dtype", s.dtype}, {"shape", shape}});
  }
  return out;
}

Json ready_event(const Options& o, const ProfiledModule& module,
                 const std::optional<GenerationPlan>& plan) {
  const Bundle& b = module.bundle();
  Json phases = Json::object();
  for (const auto& [phase, target] : b.phases) phases[phase] = target ? Json(*target) : Json("auto");
  Json profiles = Json::array();
  for (const auto& p : b.profiles) profiles.push_back(p.name);
  Json generation = nullptr;
  if (plan) {
    generation = Json{{"contract", to_string(plan->contract)},
                      {"vocab_size", plan->vocab_size},
                      {"max_cache_len", plan->max_cache_len},
                      {"eos_token_ids", plan->eos_token_ids},
                      {"slots", plan->slots}};
  }
  const Json facts = bundle_json(module, o);
  return Json{{"event", "ready"},
              {"interface", kProtocolVersion},
              {"runner", runner_facts()},
              {"model", facts["model"]},
              {"mode", facts["mode"]},
              {"profile0_only", facts["profile0_only"]},
              {"digests_verified", facts["digests_verified"]},
              {"phases", phases},
              {"profiles", profiles},
              {"inputs", tensor_specs(b.inputs)},
              {"outputs", tensor_specs(b.outputs)},
              {"generation", generation}};
}

/// The field of a generation request a RunnerError from check_generation_request concerns.
std::string generation_field(const RunnerError& e) {
  const std::string message = e.what();
  if (message.rfind("max_new_tokens", 0) == 0) return "max_new_tokens";
  return "prompt_ids";
}

class Engine {
 public:
  Engine(const Options& o, ProfiledModule& module, EventWriter& out)
      : options_(o), module_(module), out_(out) {
    try {
      plan_ = plan_generation(module.bundle());
      generator_.emplace(module, *plan_);
    } catch (const RunnerError& e) {
      no_generation_ = e.what();
    }
  }

  const std::optional<GenerationPlan>& plan() const { return plan_; }

  void run(Job& job, Queue& queue) {
    const ServeRequest& r = job.request;
    if (*job.cancelled) {
      queue.finish(r.id);
      out_.write(error_event(r.id, "cancelled", "cancelled before it started", ""));
      return;
    }
    try {
      const Json done = r.op == Op::kGenerate ? generate(r, *job.cancelled, queue) : infer(r);
      queue.finish(r.id);
      out_.write(done);
    } catch (const RequestError& e) {
      queue.finish(r.id);
      out_.write(error_event(r.id, e.kind(), e.what(), e.field()));
    } catch (const RunnerError& e) {
      queue.finish(r.id);
      std::string field;
      if (!e.input().empty()) field = "inputs";
      out_.write(error_event(r.id, to_string(e.kind()), e.what(), field));
    } catch (const std::bad_alloc&) {
      queue.finish(r.id);
      out_.write(error_event(r.id, "internal", "out of memory", ""));
    } catch (const std::exception& e) {
      queue.finish(r.id);
      out_.write(error_event(r.id, "internal", e.what(), ""));
    }
  }

 private:
  /// The mask for token `index` of the constrained generation `r` (nullopt: stop, cancelled);
  /// a mask for another index, of another size than the vocabulary's bitset or allowing no
  /// token fails the generation naming the field.
  std::optional<std::vector<uint32_t>> mask_for(const ServeRequest& r, int64_t index, Queue& queue) {
    auto mask = queue.await_mask(r.id, [&] { return out_.gone(); });
    if (!mask) return std::nullopt;
    return checked_mask(std::move(*mask), index, plan_->vocab_size);
  }

  Json generate(const ServeRequest& r, const std::atomic<bool>& cancelled, Queue& queue) {
    if (!generator_) {
      throw RequestError("request_refused", "this bundle cannot generate: " + no_generation_);
    }
    GenerationRequest g = r.generate;
    // An infer since the last generation ran the method on other tokens: the cache slots the
    // kept conversation lives in were overwritten, so this one starts cold.
    if (cache_overwritten_) g.reuse_prefix = false;
    try {
      check_generation_request(*plan_, g.prompt, g.max_new_tokens,
                               RequestFlags{"prompt_ids", "max_new_tokens", false});
    } catch (const RunnerError& e) {
      throw RequestError(to_string(e.kind()), e.what(), generation_field(e));
    }
    TokenCallbacks callbacks;
    if (r.stream) {
      callbacks.on_token = [&](int64_t index, int64_t token) {
        out_.write(Json{{"id", r.id}, {"event", "token"}, {"index", index}, {"token", token}});
      };
    }
    callbacks.cancelled = [&] { return cancelled.load() || out_.gone(); };
    if (r.constrained) {
      if (!r.stream) {
        throw RequestError("usage",
                           "constrained: needs stream: true (the client reads each token to "
                           "send the next mask)",
                           "constrained");
      }
      callbacks.allowed = [&](int64_t index) { return mask_for(r, index, queue); };
    }
    enter_stage("serving request " + r.id);
    cache_overwritten_ = false;  // a cold start (or a failure, which forgets it) follows
    return generate_done_event(r.id, generator_->generate(g, callbacks));
  }

  Request infer_request(const serve::InferRequest& in) const {
    if (in.phase) {
      try {
        return module_.request_for_phase(*in.phase);
      } catch (const RunnerError& e) {
        throw RequestError("request_refused", e.what(), "request.phase");
      }
    }
    if (in.profile) return Request::pinned(*in.profile);
    if (in.automatic) return Request::automatic();
    const Bundle& b = module_.bundle();
    std::string names;
    for (const auto& [phase, target] : b.phases) names += (names.empty() ? "" : ", ") + phase;
    if (b.phases.size() != 1) {
      throw RequestError("usage",
                         "request: missing; name a phase (" + (names.empty() ? "none" : names) +
                             "), a profile or auto",
                         "request");
    }
    return module_.request_for_phase(b.phases.begin()->first);
  }

  Json infer(const ServeRequest& r) {
    const Bundle& b = module_.bundle();
    const Request request = infer_request(r.infer);
    // The inputs in the bundle's order, each named once, with the bundle's dtype.
    std::vector<Array> inputs;
    for (const auto& spec : b.inputs) {
      const serve::NamedArray* found = nullptr;
      for (const auto& given : r.infer.inputs) {
        if (given.name == spec.name) found = &given;
      }
      if (!found) {
        throw RequestError("usage", "inputs: no tensor named '" + spec.name +
                                        "'; the bundle's inputs are " + names_of(b.inputs),
                           "inputs");
      }
      if (found->array.dtype != spec.dtype) {
        throw RequestError("usage",
                           "inputs: '" + spec.name + "' is " + found->array.dtype +
                               "; the bundle declares " + spec.dtype,
                           "inputs");
      }
      inputs.push_back(found->array);
    }
    if (r.infer.inputs.size() != b.inputs.size()) {
      throw RequestError("usage",
                         "inputs: " + std::to_string(r.infer.inputs.size()) +
                             " tensors given; the bundle's inputs are " + names_of(b.inputs),
                         "inputs");
    }
    std::vector<size_t> wanted;
    if (r.infer.outputs) {
      for (const auto& name : *r.infer.outputs) {
        size_t k = 0;
        while (k < b.outputs.size() && b.outputs[k].name != name) ++k;
        if (k == b.outputs.size()) {
          throw RequestError("usage",
                             "outputs: the bundle has no output '" + name + "' (it has " +
                                 names_of(b.outputs) + ")",
                             "outputs");
        }
        wanted.push_back(k);
      }
    }
    enter_stage("serving request " + r.id);
    // From here the method runs on the request's tensors: a causal LM's in-program KV cache
    // no longer holds the kept conversation (docs/engine-protocol.md, prefix reuse).
    cache_overwritten_ = true;
    const auto t0 = std::chrono::steady_clock::now();
    RunResult result = guarded(request, [&] { return module_.execute(inputs); });
    const double ms = elapsed_ms(t0);
    if (!r.infer.outputs) {
      for (size_t k = 0; k < result.outputs.size(); ++k) wanted.push_back(k);
    }
    Json outputs = Json::array();
    for (size_t k : wanted) {
      if (k >= result.outputs.size()) continue;
      const Array& a = result.outputs[k];
      outputs.push_back(Json{{"name", k < b.outputs.size() ? b.outputs[k].name : "output_" + std::to_string(k)},
                             {"dtype", a.dtype},
                             {"shape", a.shape},
                             {"b64", base64_encode(a.data)}});
    }
    return Json{{"id", r.id},
                {"event", "done"},
                {"profile", result.profile},
                {"profile_name", profile_name(b, result.profile)},
                {"outcome", trt_edge::to_string(result.outcome)},
                {"latency_ms", round_ms(ms)},
                {"outputs", outputs}};
  }

  static std::string names_of(const std::vector<TensorSpec>& specs) {
    std::string names;
    for (const auto& s : specs) names += (names.empty() ? "" : ", ") + s.name;
    return names.empty() ? "none" : names;
  }

  const Options& options_;
  ProfiledModule& module_;
  EventWriter& out_;
  std::optional<GenerationPlan> plan_;
  std::optional<Generator> generator_;
  std::string no_generation_;
  bool cache_overwritten_ = false;  ///< an infer ran since the last generation
};

}  // namespace

int run_serve(const Options& o, ProfiledModule& module) {
  ::signal(SIGPIPE, SIG_IGN);  // a parent gone away is a failed write, not a death
  EventWriter out;
  Engine engine(o, module, out);
  out.write(ready_event(o, module, engine.plan()));
  enter_stage("serving");
  Queue queue;
  std::thread reader(read_requests, std::ref(queue), std::ref(out), o.max_request_bytes);
  if (engine.plan() && engine.plan()->slots > 1) {
    serve_slots(module, *engine.plan(), queue, out, [&](Job& job) { engine.run(job, queue); });
  } else {
    while (std::optional<Job> job = queue.pop()) {
      if (out.gone()) queue.cancel_all();
      engine.run(*job, queue);
      enter_stage("serving");
    }
  }
  if (const auto shutdown = queue.shutdown()) {
    out.write(Json{{"id", shutdown->id}, {"event", "done"}});
  }
  // The reader has ended (EOF or shutdown read): nothing else touches the queue.
  reader.join();
  return 0;
}

}  // namespace trt_edge::runner::cli
