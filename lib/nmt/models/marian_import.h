#pragma once
// `nmt import`: a Hugging Face MarianMTModel directory (an OPUS-MT model: config.json,
// model.safetensors or pytorch_model.bin, source.spm, target.spm, vocab.json) as an nmt model
// directory that translates as transformers' generate() does, token for token.
//
// How the two models meet:
//  - nmt's Transformer with the options Marian needs (models/config.h): post-norm, the config's
//    activation, sinusoids in Marian's concatenated layout, √d embedding scale as the config says,
//    a bias on the logits (final_logits_bias), one embedding table for both sides when shared.
//  - Vocabulary: nmt's ids are pad 0, unk 1, bos 2, eos 3 (text/special_ids.h), Marian's
//    eos 0, unk 1, ..., pad last, and its decoder starts from pad. nmt's ids are Marian's pieces
//    in Marian's order with the special ones moved to the front; the embedding, output and bias
//    rows are permuted to match. nmt's BOS row is Marian's decoder-start (pad) row; <pad> and
//    <s> get a logit bias of -1e9, so they are never produced and weigh nothing in the softmax
//    (transformers bans pad too, through the bad_words_ids of OPUS-MT's generation config).
//  - Segmentation: spm.src.model and spm.model are source.spm and target.spm with the pieces
//    renumbered to those ids (text/spm_proto.h); a vocabulary piece a side's model lacks is
//    UNUSED there, as transformers maps such pieces to nothing it would produce.
//  - Weights: mapped to nmt's parameter names without LibTorch (float32 arrays); how they are
//    written is the binary's (write_imported_weights).
#include <string>
#include <vector>

#include "nmt/models/config.h"
#include "nmt/models/hf_weights.h"

namespace nmt::models {

struct ImportSummary {
  std::string weights_file;
  int64_t parameters = 0;
  int64_t vocabulary = 0;              // nmt's target vocabulary (Marian's + <s>)
  std::vector<std::string> notes;      // what the user should know (ignored config keys, ...)
  double seconds = 0;
};

// Writes `out_dir` (atomically: nothing is left on failure, an existing directory only with
// `force`). Every bad input is a RuntimeError naming the file.
ImportSummary import_marian(const std::string& hf_dir, const std::string& out_dir, bool force);

// `mapped` as a model directory's model.safetensors at `path` (with its checksum); a NaN or
// infinite value → RuntimeError naming `file` (the weights read) and the tensor.
void write_imported_safetensors(const HostTensors& mapped, const std::string& file, const std::string& path);

// The imported model's weights (`mapped`: every parameter of nmt's Transformer for `config`, by
// its state-dict name) written into the model directory `dir`; `file` names the weights read in
// errors. Defined by the binary: write_imported_safetensors, then model.pt through LibTorch's
// module (weights_file.cc), or read back by the CPU engine (decode/without_torch.cc).
void write_imported_weights(const ModelConfig& config, const HostTensors& mapped, const std::string& file,
                            const std::string& dir);

}  // namespace nmt::models
