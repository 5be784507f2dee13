// --serve on a slots program (bundle.json llm version 3, `runtime.slots` N > 1): continuous
// batching. Up to N generate requests run at once, each in a slot of the one loaded program
// (its own KV cache). Each turn of the loop:
//   (a) when some request still has prompt to prefill, ONE chunk of it (batch 1, at most the
//       prefill profile's max seq) under `prefill`'s guard — the oldest such request first;
//   (b) every request whose next token's logits are there is sampled (its own sampler, seed,
//       penalties, stop ids and budget); token events go out, finished requests get their
//       done event and free their slot;
//   (c) ONE decode step feeding each decoding request's last token, all rows in one call
//       (rows in slot order, cache_slot = their slots; split into calls of at most the decode
//       profile's max batch) under `decode`'s guard; then (b) again.
// So between two decode steps runs at most one prefill chunk of at most prefill_high tokens:
// that bounds how long a long prompt delays the streams already decoding.
// A constrained request is sampled only once its mask has arrived; until then it sits out
// the decode steps (the others go on). A cancel frees its slot at the next turn.
// Prefix reuse per slot: each slot remembers the tokens its cache holds; a new request goes
// to the free slot whose tokens share the longest prefix with its prompt (ties, none, or
// reuse_prefix false: the least recently used) and prefills only the rest.
// A request cancelled while it waits (queued, or an infer held) is answered at the next turn.
// Requests beyond N, and every infer, wait in the queue; an infer runs when no slot is busy,
// then every slot's cache is forgotten (the infer's tensors may have written any of them).
#pragma once

#include <functional>

#include "generation_plan.h"
#include "profiled_module.h"
#include "serve_queue.h"

namespace trt_edge::runner::cli {

/// Runs the queue until it is closed and drained. `run_alone` runs a request that is not a
/// generate (an infer) while no slot is busy, answering it.
void serve_slots(ProfiledModule& module, const GenerationPlan& plan, Queue& queue,
                 EventWriter& out, const std::function<void(Job&)>& run_alone);

}  // namespace trt_edge::runner::cli
