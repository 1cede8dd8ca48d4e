#pragma once
// Data-parallel training on PyTorch's distributed engine (c10d): a TCPStore rendezvous at
// MASTER_ADDR:MASTER_PORT (served by rank 0) and a process group over it, Gloo for CPU tensors
// and NCCL for CUDA tensors (when this LibTorch was built with it). Nothing here is a protocol
// of our own: the store carries a few bytes that only rank 0 has (the SentencePiece model, the
// resumed optimizer state), and the process group carries every tensor.
//
// Any failed or timed-out collective (a rank died, a machine became unreachable) becomes one
// RuntimeError naming this rank and the cause; the process group is then abandoned rather than
// shut down, because shutting down waits for peers that will never answer.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "nmt/train/dist_options.h"

namespace nmt::train {

class Distributed {
 public:
  // A single process (world size 1): every collective is a no-op.
  Distributed();
  // Joins the job: rank 0 serves the store, every rank connects, then the process group is
  // built (NCCL when `device` is CUDA, else Gloo). Blocks until all ranks have arrived or the
  // timeout passes (RuntimeError naming the address).
  Distributed(const DistOptions& resolved_options, const torch::Device& device);
  ~Distributed();
  Distributed(const Distributed&) = delete;
  Distributed& operator=(const Distributed&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  bool is_main() const { return rank_ == 0; }
  bool active() const { return world_size_ > 1; }

  // Copies rank 0's tensors into every rank's tensors, in place.
  void broadcast(const std::vector<torch::Tensor>& tensors);
  // Sums the tensors element-wise over all ranks, in place. Tensors are packed into flat
  // buckets of about `bucket_bytes` per dtype, so a model costs a few calls, not one per
  // parameter.
  void all_reduce_sum(const std::vector<torch::Tensor>& tensors, size_t bucket_bytes = 25u << 20);
  // The largest of every rank's value (used to agree on stopping).
  int64_t all_reduce_max(int64_t value);
  // Rank 0 publishes `bytes` under `key`; every other rank receives them (blocking up to the
  // timeout). Returns the bytes on every rank.
  std::string share_from_main(const std::string& key, const std::string& bytes);

 private:
  struct Impl;  // the c10d objects: their headers stay out of the rest of the project
  [[noreturn]] void fail(const std::string& during, const std::exception& e);

  int rank_ = 0;
  int world_size_ = 1;
  std::string address_;
  double timeout_s_ = 0;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nmt::train
