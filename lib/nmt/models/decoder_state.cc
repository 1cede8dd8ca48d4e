#include "nmt/models/decoder_state.h"

#include <algorithm>

namespace nmt::models {

void DecoderState::add(std::string name, torch::Tensor tensor, Rows rows) {
  TORCH_CHECK(!contains(name), "DecoderState: entry '", name, "' declared twice");
  entries_.push_back({std::move(name), std::move(tensor), rows});
}

DecoderState::Entry* DecoderState::find(const std::string& name) {
  for (auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

const DecoderState::Entry* DecoderState::find(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

torch::Tensor& DecoderState::at(const std::string& name) {
  Entry* e = find(name);
  TORCH_CHECK(e, "DecoderState: no entry '", name, "' (a state started by another model?)");
  return e->tensor;
}

const torch::Tensor& DecoderState::at(const std::string& name) const {
  const Entry* e = find(name);
  TORCH_CHECK(e, "DecoderState: no entry '", name, "' (a state started by another model?)");
  return e->tensor;
}

bool DecoderState::contains(const std::string& name) const { return find(name) != nullptr; }

std::vector<torch::Tensor>& DecoderState::history(const std::string& name) {
  for (auto& h : histories_)
    if (h.name == name) return h.steps;
  histories_.push_back({name, {}});
  return histories_.back().steps;
}

void DecoderState::select(const torch::Tensor& rows, const torch::Tensor& sources) {
  for (auto& e : entries_) {
    if (!e.tensor.defined()) continue;
    const bool per_source = e.rows == Rows::kPerSource;
    if (per_source && !sources.defined()) continue;
    e.tensor = e.tensor.index_select(0, per_source ? sources : rows);
  }
  for (auto& m : members_) m.select(rows, sources);
}

}  // namespace nmt::models
