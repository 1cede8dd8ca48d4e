#include <unordered_set>

#include <fmt/format.h>

#include "nmt/models/architecture.h"
#include "nmt/models/model.h"
#include "nmt/util/error.h"

namespace nmt::models {

Seq2SeqModel make_model(const ModelConfig& config) { return architecture(config.type).make(config); }

int64_t count_parameters(const Seq2SeqModelImpl& model) {
  std::unordered_set<const void*> seen;
  int64_t total = 0;
  for (const auto& p : model.parameters())
    if (seen.insert(p.unsafeGetTensorImpl()).second) total += p.numel();
  return total;
}

}  // namespace nmt::models
