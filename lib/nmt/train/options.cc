// TrainOptions <-> config.json's "train" section. Without LibTorch, so the fuzzer reaches it.
#include <limits>
#include <type_traits>

#include "nmt/train/trainer.h"
#include "nmt/util/json_read.h"

namespace nmt::train {

nlohmann::json TrainOptions::to_json() const {
  return {{"train_prefix", train_prefix}, {"valid_prefix", valid_prefix}, {"train_tsv", train_tsv},
          {"valid_tsv", valid_tsv}, {"src_lang", src_lang}, {"tgt_lang", tgt_lang},
          {"valid_size", valid_size}, {"strict", strict}, {"max_chars", max_chars},
          {"vocab_size", vocab_size}, {"subword_type", subword_type}, {"lr", lr}, {"warmup", warmup},
          {"adam_beta1", adam_beta1}, {"adam_beta2", adam_beta2}, {"adam_eps", adam_eps},
          {"weight_decay", weight_decay}, {"label_smoothing", label_smoothing}, {"clip_norm", clip_norm},
          {"max_tokens", max_tokens}, {"accum_steps", accum_steps}, {"lr_schedule", lr_schedule}, {"max_epochs", max_epochs},
          {"max_steps", max_steps}, {"max_time_s", max_time_s}, {"patience", patience},
          {"valid_every", valid_every}, {"log_every", log_every}, {"valid_bleu", valid_bleu},
          {"best_metric", best_metric}, {"valid_max_len_b", valid_max_len_b}, {"valid_beam", valid_beam}, {"seed", seed},
          {"threads", threads}, {"save_every", save_every}, {"keep_last", keep_last},
          {"max_bad_steps", max_bad_steps}, {"device", device}, {"bf16", bf16}};
}

TrainOptions TrainOptions::from_json(const nlohmann::json& j) {
  TrainOptions o;
  // Typed reads: a wrong type or a float out of an integer's range is a RuntimeError naming
  // the key (a float cast to an integer it does not fit is undefined behaviour).
  auto get = [&](const char* key, auto& field) {
    if (!j.contains(key)) return;
    using T = std::decay_t<decltype(field)>;
    if constexpr (std::is_same_v<T, bool>) {
      field = json_read::boolean(j, key);
    } else if constexpr (std::is_integral_v<T>) {
      constexpr int64_t lo = std::is_signed_v<T> ? static_cast<int64_t>(std::numeric_limits<T>::min()) : 0;
      constexpr int64_t hi = sizeof(T) >= sizeof(int64_t) ? std::numeric_limits<int64_t>::max()
                                                          : static_cast<int64_t>(std::numeric_limits<T>::max());
      field = static_cast<T>(json_read::integer(j, key, lo, hi));
    } else if constexpr (std::is_floating_point_v<T>) {
      field = json_read::number(j, key);
    } else {
      field = json_read::string(j, key);
    }
  };
  get("train_prefix", o.train_prefix); get("valid_prefix", o.valid_prefix); get("train_tsv", o.train_tsv);
  get("valid_tsv", o.valid_tsv); get("src_lang", o.src_lang); get("tgt_lang", o.tgt_lang);
  get("valid_size", o.valid_size); get("strict", o.strict); get("max_chars", o.max_chars);
  get("vocab_size", o.vocab_size); get("subword_type", o.subword_type); get("lr", o.lr); get("warmup", o.warmup);
  get("adam_beta1", o.adam_beta1); get("adam_beta2", o.adam_beta2); get("adam_eps", o.adam_eps);
  get("weight_decay", o.weight_decay); get("label_smoothing", o.label_smoothing); get("clip_norm", o.clip_norm);
  get("max_tokens", o.max_tokens); get("lr_schedule", o.lr_schedule); get("max_epochs", o.max_epochs);
  get("max_steps", o.max_steps); get("max_time_s", o.max_time_s); get("patience", o.patience);
  get("valid_every", o.valid_every); get("log_every", o.log_every); get("valid_bleu", o.valid_bleu);
  get("best_metric", o.best_metric); get("valid_max_len_b", o.valid_max_len_b); get("valid_beam", o.valid_beam); get("seed", o.seed);
  get("threads", o.threads); get("save_every", o.save_every); get("keep_last", o.keep_last);
  get("max_bad_steps", o.max_bad_steps); get("accum_steps", o.accum_steps); get("device", o.device);
  get("bf16", o.bf16);
  return o;
}

}  // namespace nmt::train
