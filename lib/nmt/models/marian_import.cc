#include "nmt/models/marian_import.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "nmt/models/hf_weights.h"
#include "nmt/models/model_dir.h"
#include "nmt/models/transformer_config.h"
#include "nmt/text/special_ids.h"
#include "nmt/text/spm_proto.h"
#include "nmt/text/subword.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/util/json_read.h"
#include "nmt/util/safetensors.h"

namespace nmt::models {
namespace fs = std::filesystem;

namespace {

constexpr float kNeverProduced = -1e9f;  // logit bias of <pad> and <s>: exp() of it is 0

// config.json's value of `key`, or `fallback` when absent (transformers' MarianConfig defaults).
template <typename T>
T config_value(const nlohmann::json& c, const char* key, T fallback, const std::string& path) {
  if (!c.contains(key) || c[key].is_null()) return fallback;
  try {
    return c[key].get<T>();
  } catch (const nlohmann::json::exception&) {
    throw RuntimeError(fmt::format("{}: '{}' is {}, of the wrong type", path, key, c[key].dump()));
  }
}

struct MarianConfig {
  ModelConfig model;
  int64_t vocab_size = 0, decoder_vocab_size = 0;
  int64_t pad_id = 0, eos_id = 0;
  std::vector<std::string> notes;
};

MarianConfig read_marian_config(const std::string& path) {
  const nlohmann::json c = json_read::parse(read_small_file(path, kMaxJsonBytes), path);
  if (!c.is_object()) throw RuntimeError(fmt::format("{}: not a JSON object", path));
  const auto type = config_value<std::string>(c, "model_type", "", path);
  if (type != "marian") {
    std::string arch;
    if (c.contains("architectures") && c["architectures"].is_array() && !c["architectures"].empty())
      arch = " (" + c["architectures"][0].dump() + ")";
    throw RuntimeError(fmt::format("{}: model_type '{}'{}: nmt import reads Hugging Face MarianMTModel directories "
                                   "(model_type 'marian', the OPUS-MT models) only",
                                   path, type, arch));
  }
  MarianConfig m;
  ModelConfig& mc = m.model;
  TransformerConfig& transformer = mc.get<TransformerConfig>();
  mc.type = "transformer";
  transformer.d_model = config_value<int64_t>(c, "d_model", 1024, path);
  transformer.encoder_layers = config_value<int64_t>(c, "encoder_layers", 12, path);
  transformer.decoder_layers = config_value<int64_t>(c, "decoder_layers", 12, path);
  transformer.heads = config_value<int64_t>(c, "encoder_attention_heads", 16, path);
  transformer.ffn = config_value<int64_t>(c, "encoder_ffn_dim", 4096, path);
  const auto decoder_heads = config_value<int64_t>(c, "decoder_attention_heads", 16, path);
  const auto decoder_ffn = config_value<int64_t>(c, "decoder_ffn_dim", 4096, path);
  if (decoder_heads != transformer.heads || decoder_ffn != transformer.ffn)
    throw RuntimeError(fmt::format("{}: the decoder has {} heads and a {}-wide feed-forward, the encoder {} and {}; nmt's "
                                   "Transformer has one of each",
                                   path, decoder_heads, decoder_ffn, transformer.heads, transformer.ffn));
  const auto activation = config_value<std::string>(c, "activation_function", "gelu", path);
  if (activation == "swish" || activation == "silu") transformer.activation = "swish";
  else if (activation == "relu" || activation == "gelu") transformer.activation = activation;
  else throw RuntimeError(fmt::format("{}: activation_function '{}': nmt has relu, swish (silu) and gelu", path, activation));
  transformer.pre_norm = false;  // transformers' Marian layers are post-norm whatever the config says
  if (config_value<bool>(c, "normalize_before", false, path))
    m.notes.push_back("config.json says normalize_before: true, which transformers' MarianMTModel ignores (its layers "
                      "are post-norm); imported as transformers runs it");
  if (!config_value<bool>(c, "static_position_embeddings", true, path))
    throw RuntimeError(fmt::format("{}: learned position embeddings; MarianMTModel's are sinusoidal", path));
  transformer.positions = "concatenated";
  transformer.scale_embedding = config_value<bool>(c, "scale_embedding", false, path);
  mc.max_positions = config_value<int64_t>(c, "max_position_embeddings", 1024, path);
  mc.dropout = config_value<double>(c, "dropout", 0.1, path);
  mc.attention_dropout = config_value<double>(c, "attention_dropout", 0.0, path);
  transformer.activation_dropout = config_value<double>(c, "activation_dropout", 0.0, path);
  transformer.output_bias = true;
  mc.shared_vocab = false;  // source.spm and target.spm: spm.src.model and spm.model
  const bool shared_embeddings = config_value<bool>(c, "share_encoder_decoder_embeddings", true, path);
  mc.tie_embeddings = shared_embeddings;
  mc.tie_output = config_value<bool>(c, "tie_word_embeddings", true, path);
  m.vocab_size = config_value<int64_t>(c, "vocab_size", 58101, path);
  m.decoder_vocab_size = shared_embeddings ? m.vocab_size : config_value<int64_t>(c, "decoder_vocab_size", m.vocab_size, path);
  m.pad_id = config_value<int64_t>(c, "pad_token_id", 58100, path);
  m.eos_id = config_value<int64_t>(c, "eos_token_id", 0, path);
  const auto start = config_value<int64_t>(c, "decoder_start_token_id", m.pad_id, path);
  if (start != m.pad_id)
    throw RuntimeError(fmt::format("{}: decoder_start_token_id {} is not pad_token_id {}; MarianMTModel decodes from pad",
                                   path, start, m.pad_id));
  return m;
}

// vocab.json: piece → id, every id in [0, size) exactly once.
std::vector<std::string> read_vocabulary(const std::string& path, int64_t size, int64_t pad_id, int64_t eos_id) {
  const nlohmann::json j = json_read::parse(read_small_file(path, kMaxJsonBytes), path);
  if (!j.is_object()) throw RuntimeError(fmt::format("{}: not a JSON object of pieces and ids", path));
  if (static_cast<int64_t>(j.size()) != size)
    throw RuntimeError(fmt::format("{}: {} pieces, but config.json's vocabulary size is {}", path, j.size(), size));
  std::vector<std::string> by_id(static_cast<size_t>(size));
  std::vector<bool> seen(static_cast<size_t>(size));
  for (const auto& [piece, id_json] : j.items()) {
    if (!id_json.is_number_integer() || id_json.get<int64_t>() < 0 || id_json.get<int64_t>() >= size)
      throw RuntimeError(fmt::format("{}: \"{}\" has id {}, outside 0..{}", path, piece, id_json.dump(), size - 1));
    const auto id = static_cast<size_t>(id_json.get<int64_t>());
    if (seen[id]) throw RuntimeError(fmt::format("{}: id {} given to two pieces", path, id));
    seen[id] = true;
    by_id[id] = piece;
  }
  auto expect = [&](int64_t id, const char* piece, const char* what) {
    if (by_id[static_cast<size_t>(id)] != piece)
      throw RuntimeError(fmt::format("{}: id {} ({} in config.json) is \"{}\", expected \"{}\"", path, id, what,
                                     by_id[static_cast<size_t>(id)], piece));
  };
  expect(pad_id, "<pad>", "pad_token_id");
  expect(eos_id, "</s>", "eos_token_id");
  if (!j.contains("<unk>")) throw RuntimeError(fmt::format("{}: no \"<unk>\" piece", path));
  if (j.contains("<s>")) throw RuntimeError(fmt::format("{}: a \"<s>\" piece, which MarianMTModel vocabularies lack", path));
  return by_id;
}

// nmt's order of Marian's ids: <pad>, <unk>, <s> (Marian's decoder start, pad), </s>, then
// every other id in Marian's order.
std::vector<int64_t> nmt_order(const std::vector<std::string>& marian, int64_t pad_id, int64_t eos_id) {
  int64_t unk_id = 0;
  for (size_t i = 0; i < marian.size(); ++i)
    if (marian[i] == "<unk>") unk_id = static_cast<int64_t>(i);
  std::vector<int64_t> order{pad_id, unk_id, pad_id, eos_id};
  for (int64_t i = 0; i < static_cast<int64_t>(marian.size()); ++i)
    if (i != pad_id && i != unk_id && i != eos_id) order.push_back(i);
  return order;
}

std::vector<std::string> nmt_vocabulary(const std::vector<std::string>& marian, const std::vector<int64_t>& order) {
  std::vector<std::string> v{"<pad>", "<unk>", "<s>", "</s>"};
  for (size_t i = 4; i < order.size(); ++i) v.push_back(marian[static_cast<size_t>(order[i])]);
  return v;
}

// The side's SentencePiece model renumbered to `vocabulary`; a vocabulary that is not this
// model's (more than 1% of its text pieces missing) is refused.
std::string renumbered_spm(const std::string& path, const std::vector<std::string>& vocabulary,
                           const std::string& vocab_path, std::vector<std::string>& notes) {
  const text::SpmProto proto = text::parse_spm_proto(read_small_file(path, kMaxSubwordBytes), path);
  const std::set<std::string> in_vocab(vocabulary.begin(), vocabulary.end());
  int64_t text_pieces = 0, missing = 0;
  std::string example;
  for (const auto& p : proto.pieces) {
    if (p.type != text::PieceType::kNormal && p.type != text::PieceType::kUserDefined) continue;
    ++text_pieces;
    if (!in_vocab.count(p.piece)) {
      ++missing;
      if (example.empty()) example = p.piece;
    }
  }
  if (missing * 100 > text_pieces)
    throw RuntimeError(fmt::format("{}: {} of its {} pieces (e.g. \"{}\") are not in {}: the vocabulary is not this "
                                   "SentencePiece model's",
                                   path, missing, text_pieces, example, vocab_path));
  if (missing > 0)
    notes.push_back(fmt::format("{} of the {} pieces of {} are not in {} (transformers maps them to <unk>; nmt's "
                                "segmentation avoids them)",
                                missing, text_pieces, path, vocab_path));
  return text::spm_proto_for_vocabulary(proto, vocabulary);
}

class WeightSource {
 public:
  WeightSource(HostTensors tensors, std::string file) : tensors_(std::move(tensors)), file_(std::move(file)) {}
  bool has(const std::string& name) const { return find(name) != nullptr; }
  // The tensor `name` (with or without MarianMTModel's "model." prefix) of shape `shape`.
  const HostTensor& get(const std::string& name, const std::vector<int64_t>& shape) const {
    const HostTensor* t = find(name);
    if (!t) throw RuntimeError(fmt::format("{}: no tensor '{}' (not a MarianMTModel of this config.json?)", file_, name));
    if (t->shape != shape)
      throw RuntimeError(fmt::format("{}: '{}' has shape {}, config.json makes it {}", file_, name,
                                     fmt::join(t->shape, "x"), fmt::join(shape, "x")));
    return *t;
  }
  const std::string& file() const { return file_; }

 private:
  const HostTensor* find(const std::string& name) const {
    for (const std::string& key : {"model." + name, name}) {
      auto it = tensors_.find(key);
      if (it != tensors_.end()) return &it->second;
    }
    return nullptr;
  }
  HostTensors tensors_;
  std::string file_;
};

// The rows of a [n, ...] tensor in `order`.
HostTensor rows_in(const HostTensor& t, const std::vector<int64_t>& order) {
  const int64_t n = t.shape.empty() ? 1 : t.shape[0];
  const size_t width = n > 0 ? t.values.size() / static_cast<size_t>(n) : 0;
  HostTensor out{t.shape, {}};
  out.shape[0] = static_cast<int64_t>(order.size());
  out.values.reserve(order.size() * width);
  for (int64_t r : order)
    out.values.insert(out.values.end(), t.values.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(r) * width),
                      t.values.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(r + 1) * width));
  return out;
}

// Tensors of equal trailing shape stacked along their first dimension.
HostTensor concatenated(const std::vector<const HostTensor*>& parts) {
  HostTensor out{parts.front()->shape, {}};
  out.shape[0] = 0;
  for (const HostTensor* p : parts) {
    out.shape[0] += p->shape[0];
    out.values.insert(out.values.end(), p->values.begin(), p->values.end());
  }
  return out;
}

// nmt's parameter name → its value, from Marian's tensors.
HostTensors map_weights(const WeightSource& w, const MarianConfig& mc, const std::vector<int64_t>& src_order,
                        const std::vector<int64_t>& tgt_order) {
  const ModelConfig& c = mc.model;
  const TransformerConfig& sizes = c.get<TransformerConfig>();
  const int64_t d = sizes.d_model, f = sizes.ffn;
  HostTensors out;
  const auto shared_name = w.has("shared.weight") ? "shared.weight" : "encoder.embed_tokens.weight";
  const HostTensor& src_table = w.get(c.tie_embeddings ? shared_name : "encoder.embed_tokens.weight", {mc.vocab_size, d});
  const HostTensor& tgt_table =
      c.tie_embeddings ? src_table : w.get("decoder.embed_tokens.weight", {mc.decoder_vocab_size, d});
  out["src_embedding.weight"] = rows_in(src_table, src_order);
  if (!c.tie_embeddings) out["tgt_embedding.weight"] = rows_in(tgt_table, tgt_order);
  auto linear = [&](const std::string& to, const std::string& from, int64_t rows_out, int64_t cols) {
    out[to + ".weight"] = w.get(from + ".weight", {rows_out, cols});
    out[to + ".bias"] = w.get(from + ".bias", {rows_out});
  };
  auto fused = [&](const std::string& to, const std::string& prefix, std::vector<std::string> parts) {
    std::vector<const HostTensor*> weights, biases;
    for (const auto& p : parts) {
      weights.push_back(&w.get(prefix + "." + p + ".weight", {d, d}));
      biases.push_back(&w.get(prefix + "." + p + ".bias", {d}));
    }
    out[to + ".weight"] = concatenated(weights);
    out[to + ".bias"] = concatenated(biases);
  };
  auto norm_of = [&](const std::string& to, const std::string& from) {
    out[to + ".weight"] = w.get(from + ".weight", {d});
    out[to + ".bias"] = w.get(from + ".bias", {d});
  };
  // Marian's names and nmt's share each layer's prefix ("encoder.layers.N.", "decoder.layers.N.").
  auto self_attention = [&](const std::string& p) {
    fused(p + "self_attn.qkv_proj", p + "self_attn", {"q_proj", "k_proj", "v_proj"});
    linear(p + "self_attn.out_proj", p + "self_attn.out_proj", d, d);
    norm_of(p + "norm1", p + "self_attn_layer_norm");
  };
  auto feed_forward = [&](const std::string& p, const char* norm) {
    linear(p + "ffn.fc1", p + "fc1", f, d);
    linear(p + "ffn.fc2", p + "fc2", d, f);
    norm_of(p + norm, p + "final_layer_norm");
  };
  for (int64_t i = 0; i < sizes.encoder_layers; ++i) {
    const std::string p = fmt::format("encoder.layers.{}.", i);
    self_attention(p);
    feed_forward(p, "norm2");
  }
  for (int64_t i = 0; i < sizes.decoder_layers; ++i) {
    const std::string p = fmt::format("decoder.layers.{}.", i);
    self_attention(p);
    linear(p + "cross_attn.q_proj", p + "encoder_attn.q_proj", d, d);
    fused(p + "cross_attn.kv_proj", p + "encoder_attn", {"k_proj", "v_proj"});
    linear(p + "cross_attn.out_proj", p + "encoder_attn.out_proj", d, d);
    norm_of(p + "norm2", p + "encoder_attn_layer_norm");
    feed_forward(p, "norm3");
  }
  // Logits: the tied table or lm_head, plus final_logits_bias (zeros where absent).
  const int64_t V = mc.decoder_vocab_size;
  HostTensor bias{{V}, std::vector<float>(static_cast<size_t>(V), 0.0f)};
  if (w.has("final_logits_bias")) bias.values = w.get("final_logits_bias", {1, V}).values;
  bias = rows_in(bias, tgt_order);
  bias.values[text::kPadId] = kNeverProduced;
  bias.values[text::kBosId] = kNeverProduced;
  if (c.tie_output) {
    out["output_bias"] = std::move(bias);
  } else {
    out["output.weight"] = rows_in(w.get("lm_head.weight", {V, d}), tgt_order);
    out["output.bias"] = std::move(bias);
  }
  return out;
}

void require_file(const fs::path& path) {
  if (!fs::is_regular_file(path))
    throw RuntimeError(fmt::format("{}: missing (a MarianMTModel directory holds config.json, model.safetensors or "
                                   "pytorch_model.bin, source.spm, target.spm and vocab.json)",
                                   path.string()));
}

}  // namespace

void write_imported_safetensors(const HostTensors& mapped, const std::string& file, const std::string& path) {
  std::vector<safetensors::TensorToWrite> tensors;
  for (const auto& [name, t] : mapped) {
    if (!std::all_of(t.values.begin(), t.values.end(), [](float v) { return std::isfinite(v); }))
      throw RuntimeError(fmt::format("{}: '{}' holds NaN or infinite values", file, name));
    tensors.push_back({name, safetensors::DType::kF32, t.shape, t.values.data()});
  }
  safetensors::write_file(path, tensors, {{safetensors::kChecksumKey, safetensors::checksum(tensors)}});
}

ImportSummary import_marian(const std::string& hf_dir, const std::string& out_dir, bool force) {
  const auto start = std::chrono::steady_clock::now();
  const fs::path dir(hf_dir);
  if (!fs::is_directory(dir)) throw RuntimeError(fmt::format("{}: not a directory", hf_dir));
  fs::path target = fs::path(out_dir).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();
  std::error_code ec;
  const bool empty_dir = fs::is_directory(target, ec) && fs::is_empty(target, ec);
  if (fs::exists(fs::symlink_status(target)) && !empty_dir && !force)
    throw UsageError(fmt::format("{}: already exists (--force replaces it)", out_dir));
  for (const char* f : {"config.json", "source.spm", "target.spm", "vocab.json"}) require_file(dir / f);
  const bool separate_vocabs = fs::exists(dir / "target_vocab.json");

  ImportSummary summary;
  MarianConfig mc = read_marian_config((dir / "config.json").string());
  const std::string src_vocab_path = (dir / "vocab.json").string();
  const std::string tgt_vocab_path = separate_vocabs ? (dir / "target_vocab.json").string() : src_vocab_path;
  if (!separate_vocabs && mc.decoder_vocab_size != mc.vocab_size)
    throw RuntimeError(fmt::format("{}: decoder_vocab_size {} differs from vocab_size {} but there is no "
                                   "target_vocab.json", (dir / "config.json").string(), mc.decoder_vocab_size, mc.vocab_size));
  const auto src_marian = read_vocabulary(src_vocab_path, mc.vocab_size, mc.pad_id, mc.eos_id);
  const auto tgt_marian = separate_vocabs ? read_vocabulary(tgt_vocab_path, mc.decoder_vocab_size, mc.pad_id, mc.eos_id)
                                          : src_marian;
  const auto src_order = nmt_order(src_marian, mc.pad_id, mc.eos_id);
  const auto tgt_order = nmt_order(tgt_marian, mc.pad_id, mc.eos_id);
  const auto src_vocab = nmt_vocabulary(src_marian, src_order), tgt_vocab = nmt_vocabulary(tgt_marian, tgt_order);
  const std::string src_spm = renumbered_spm((dir / "source.spm").string(), src_vocab, src_vocab_path, mc.notes);
  const std::string tgt_spm = renumbered_spm((dir / "target.spm").string(), tgt_vocab, tgt_vocab_path, mc.notes);
  // Checked the way nmt will load them (special-id layout, sizes).
  text::SubwordModel::load_from_serialized(src_spm, (dir / "source.spm").string());
  text::SubwordModel::load_from_serialized(tgt_spm, (dir / "target.spm").string());
  mc.model.src_vocab = static_cast<int64_t>(src_vocab.size());
  mc.model.tgt_vocab = static_cast<int64_t>(tgt_vocab.size());
  if (separate_vocabs) mc.model.tie_embeddings = false;
  mc.model.validate([&](const std::string& key) { return fmt::format("{}: '{}'", (dir / "config.json").string(), key); });

  std::string weights_file;
  auto tensors = read_hf_weights(hf_dir, &weights_file);
  const WeightSource weights(std::move(tensors), weights_file);
  HostTensors mapped = map_weights(weights, mc, src_order, tgt_order);
  for (const auto& [name, t] : mapped) summary.parameters += static_cast<int64_t>(t.values.size());

  nlohmann::json train = {{"imported_from", {{"format", "marian"},
                                             {"path", fs::absolute(dir).lexically_normal().string()},
                                             {"weights", fs::path(weights_file).filename().string()}}}};
  write_model_directory(target.string(), out_dir, [&](const std::string& tmp) {
    write_file_atomic((fs::path(tmp) / kSourceSubwordFile).string(), src_spm);
    write_file_atomic((fs::path(tmp) / kSubwordFile).string(), tgt_spm);
    write_imported_weights(mc.model, mapped, weights_file, tmp);
    write_file_atomic((fs::path(tmp) / kConfigFile).string(),
                      model_directory_config(mc.model.to_json(), train).dump(2) + "\n");
  });
  summary.weights_file = weights_file;
  summary.vocabulary = mc.model.tgt_vocab;
  summary.notes = std::move(mc.notes);
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace nmt::models
