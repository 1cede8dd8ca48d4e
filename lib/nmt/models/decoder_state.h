#pragma once
// What incremental decoding carries from one step to the next, as named entries that each
// declare how they follow the rows of the batch (CTranslate2's DecoderState, a map from names
// to tensors that the decoder knows how to reorder). A search strategy only ever calls
// `select`; the model that declared the entries is the only one that reads them.
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "nmt/models/alignment_choice.h"

namespace nmt::models {

class DecoderState {
 public:
  // How an entry follows the rows when sentences finish or beams are reordered.
  enum class Rows {
    kPerRow,     // depends on the row's target prefix (a hidden state, an index table): follows `rows`
    kPerSource,  // depends only on the row's source sentence (source mask, cross-attention
                 // keys/values, projected memory): follows `sources`
  };

  // Declares an entry (undefined tensors are allowed: filled by the first step). Names are
  // unique within a state.
  void add(std::string name, torch::Tensor tensor, Rows rows);
  torch::Tensor& at(const std::string& name);
  const torch::Tensor& at(const std::string& name) const;
  bool contains(const std::string& name) const;

  // An append-only list of tensors, one per decoding step, that is never reordered or copied:
  // later steps reach the right rows through a kPerRow index entry the model keeps
  // (Transformer: each step's self-attention keys/values, so reordering beams copies a
  // [rows, steps] table of ints instead of every layer's keys and values).
  std::vector<torch::Tensor>& history(const std::string& name);

  // Keeps the rows `index` (int64 [n]) of every entry, in that order (finished sentences
  // leave the batch).
  void select(const torch::Tensor& index) { select(index, index); }
  // Keeps the rows `rows` of the per-row entries and the rows `sources` of the per-source
  // entries; an undefined `sources` leaves the per-source entries as they are. Per-source
  // entries may hold one row per source sentence while the per-row ones hold `beams`
  // consecutive rows per source (beam search, as CTranslate2 does): a model sees it from the
  // shapes (rows / per-source rows) and folds the beams into its cross-attention.
  void select(const torch::Tensor& rows, const torch::Tensor& sources);

  // The states of the members of an ensemble, reordered with this one.
  std::vector<DecoderState>& members() { return members_; }

  int64_t position = 0;  // number of target tokens already fed

  // Attention of the last step over the source tokens, [rows, src_len], each row summing to
  // 1: filled by `step` only when record_attention is set; a Transformer reports the layer and
  // head `alignment` names (out-of-range values clamped), a GRU its one attention.
  bool record_attention = false;
  AlignmentChoice alignment;
  torch::Tensor attention;

 private:
  struct Entry {
    std::string name;
    torch::Tensor tensor;
    Rows rows;
  };
  struct History {
    std::string name;
    std::vector<torch::Tensor> steps;
  };
  Entry* find(const std::string& name);
  const Entry* find(const std::string& name) const;

  std::vector<Entry> entries_;  // a handful per model: a linear search beats hashing
  std::deque<History> histories_;  // a deque: history() references stay valid as lists are added
  std::vector<DecoderState> members_;
};

}  // namespace nmt::models
