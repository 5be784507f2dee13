#include <algorithm>
#include <iomanip>
#include <iostream>

#include "documents.h"
#include "jobs.h"

namespace trt_edge::runner::cli {

/// --generate: one generation over the loaded module (generate.h), then its document.
int run_generate(const Options& o, ProfiledModule& module, const GenerationPlan& plan) {
  Generator generator(module, plan);
  GenerationRequest request;
  request.prompt = o.prompt_ids;
  request.max_new_tokens = o.max_new_tokens;
  request.sampling = o.sampling;
  request.stop_token_ids = o.stop_token_ids;
  const GenerationResult result = generator.generate(request);
  if (o.json) {
    Json doc = document_head(true);
    doc.update(bundle_json(module, o));
    doc.update(generation_json(plan, result, o.max_new_tokens));
    std::cout << dumped(doc) << "\n";
    return 0;
  }
  std::cout << "tokens: ";
  for (size_t i = 0; i < result.tokens.size(); ++i) std::cout << (i ? "," : "") << result.tokens[i];
  std::cout << "\n";
  for (const auto& line : generation_summary(result, module.mode())) std::cerr << line << "\n";
  return 0;
}

}  // namespace trt_edge::runner::cli
