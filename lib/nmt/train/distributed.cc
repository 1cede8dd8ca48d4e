#include "nmt/train/distributed.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include <fmt/format.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif
#include <torch/version.h>

#include "nmt/util/error.h"

namespace nmt::train {

// LibTorch 2.x splits ProcessGroup into a front and per-device Backends (Gloo and NCCL are
// Backends there); 1.13's Gloo and NCCL groups are ProcessGroups. The collectives we call have
// the same signatures in both.
#if TORCH_VERSION_MAJOR >= 2
using CollectiveGroup = c10d::Backend;
#else
using CollectiveGroup = c10d::ProcessGroup;
#endif

struct Distributed::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<CollectiveGroup> group;
  torch::Device device = torch::kCPU;  // where the group's tensors live (NCCL: the GPU)
  bool failed = false;
};

namespace {

// An integer launcher variable, or `fallback` when unset; garbage is a usage error.
int env_int(const char* name, int fallback) {
  const char* value = std::getenv(name);
  if (!value || !*value) return fallback;
  char* end = nullptr;
  const long parsed = std::strtol(value, &end, 10);
  if (*end != '\0' || parsed < 0 || parsed > 1 << 30)
    throw UsageError(fmt::format("environment variable {}='{}' is not a non-negative integer", name, value));
  return static_cast<int>(parsed);
}

std::string one_line(std::string text) {
  // c10 errors append a C++ backtrace after the first line; the first line says what happened.
  if (auto nl = text.find('\n'); nl != std::string::npos) text.resize(nl);
  return text;
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

// Whether PyTorch's launcher (torchrun's elastic agent) already serves the rendezvous store at
// our address: it then listens on MASTER_ADDR:MASTER_PORT itself and says so with
// TORCHELASTIC_USE_AGENT_STORE=True, and every rank, rank 0 included, must be its client (as
// torch.distributed's own _create_c10d_store does); serving it again fails with "address
// already in use".
bool launcher_serves_store(const DistOptions& o) {
  const char* flag = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
  const char* addr = std::getenv("MASTER_ADDR");
  const char* port = std::getenv("MASTER_PORT");
  return flag && std::string(flag) == "True" && addr && o.master_addr == addr && port &&
         std::to_string(o.master_port) == port;
}

}  // namespace

DistOptions DistOptions::resolved() const {
  DistOptions r = *this;
  if (r.rank < 0) r.rank = env_int("RANK", 0);
  if (r.world_size < 0) r.world_size = env_int("WORLD_SIZE", 1);
  if (r.local_rank < 0) r.local_rank = env_int("LOCAL_RANK", r.rank);
  if (r.master_addr.empty()) {
    const char* addr = std::getenv("MASTER_ADDR");
    r.master_addr = addr && *addr ? addr : "127.0.0.1";
  }
  if (r.master_port < 0) r.master_port = env_int("MASTER_PORT", 29500);
  if (r.world_size < 1) throw UsageError("--dist-world-size (WORLD_SIZE) must be at least 1");
  if (r.rank >= r.world_size)
    throw UsageError(fmt::format("--dist-rank (RANK) {} is outside the world of {} processes", r.rank, r.world_size));
  if (r.master_port < 1 || r.master_port > 65535)
    throw UsageError(fmt::format("--dist-port (MASTER_PORT) {} is not a TCP port", r.master_port));
  if (!(r.timeout_s > 0)) throw UsageError("--dist-timeout must be positive");
  return r;
}

Distributed::Distributed() : impl_(std::make_unique<Impl>()) {}

Distributed::Distributed(const DistOptions& o, const torch::Device& device)
    : rank_(o.rank), world_size_(o.world_size), address_(fmt::format("{}:{}", o.master_addr, o.master_port)),
      timeout_s_(o.timeout_s), impl_(std::make_unique<Impl>()) {
  if (world_size_ <= 1) return;
  impl_->device = device;
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000));
  const bool launcher_store = launcher_serves_store(o);
#if TORCH_VERSION_MAJOR < 2
  // Seen with torchrun 2.15: a LibTorch 1.13 client of its store waited without end.
  if (launcher_store)
    throw UsageError("torchrun's rendezvous store (TORCHELASTIC_USE_AGENT_STORE=True) needs nmt built against "
                     "LibTorch 2.x (this is " TORCH_VERSION "); use scripts/launch-local.sh, or the wheel's build");
#endif
  try {
    c10d::TCPStoreOptions so;
    so.port = static_cast<uint16_t>(o.master_port);
    so.isServer = rank_ == 0 && !launcher_store;
    so.numWorkers = static_cast<size_t>(world_size_);
    so.waitWorkers = !launcher_store;
    so.timeout = timeout;
    auto tcp = c10::make_intrusive<c10d::TCPStore>(o.master_addr, so);
    impl_->store = tcp;
    if (launcher_store) {
      // The launcher's store outlives a restart of the group (--max-restarts): each attempt's
      // keys get their own prefix, as older torchrun's own workers did.
      const int attempt = env_int("TORCHELASTIC_RESTART_COUNT", 0);
      impl_->store = c10::make_intrusive<c10d::PrefixStore>(fmt::format("/worker/attempt_{}", attempt), tcp);
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw RuntimeError(fmt::format("distributed rank {}: cannot {} the rendezvous at {} (--dist-addr/--dist-port, "
                                   "MASTER_ADDR/MASTER_PORT): {}",
                                   rank_, rank_ == 0 && !launcher_store ? "serve" : "reach", address_,
                                   one_line(e.what())));
  }
  try {
    if (device.is_cuda()) {
#ifdef USE_C10D_NCCL
      auto options = c10d::ProcessGroupNCCL::Options::create();
      options->timeout = timeout;
      impl_->group = c10::make_intrusive<c10d::ProcessGroupNCCL>(impl_->store, rank_, world_size_, options);
#else
      throw UsageError("this LibTorch has no NCCL: distributed training on CUDA is not available in this build");
#endif
    } else {
      auto options = c10d::ProcessGroupGloo::Options::create(timeout);
      // Loopback jobs stay on loopback; otherwise GLOO_SOCKET_IFNAME picks the interface (as in
      // PyTorch), else the interface this host name resolves to.
      if (is_loopback(o.master_addr)) {
        options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      } else if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
        options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
      } else {
        options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      }
      impl_->group = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, rank_, world_size_, options);
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw RuntimeError(fmt::format("distributed rank {}: cannot form the process group of {} at {}: {}", rank_,
                                   world_size_, address_, one_line(e.what())));
  }
}

Distributed::~Distributed() {
  if (impl_ && impl_->failed) {
    // A failed group's worker threads may be blocked on a dead peer; destroying it would
    // join them and hang. The process is about to exit with the error anyway.
    (void)impl_->group.release();
    (void)impl_->store.release();
  }
}

void Distributed::fail(const std::string& during, const std::exception& e) {
  impl_->failed = true;
  throw RuntimeError(fmt::format("distributed rank {} of {}: {} failed: {} (another rank has probably died or "
                                 "stopped answering; timeout {}s)",
                                 rank_, world_size_, during, one_line(e.what()), timeout_s_));
}

void Distributed::broadcast(const std::vector<torch::Tensor>& tensors) {
  if (!active()) return;
  try {
    for (const auto& t : tensors) {
      std::vector<at::Tensor> one = {t.detach()};
      auto work = impl_->group->broadcast(one, c10d::BroadcastOptions{});
      work->wait();
    }
  } catch (const std::exception& e) {
    fail("broadcasting the weights", e);
  }
}

void Distributed::all_reduce_sum(const std::vector<torch::Tensor>& tensors, size_t bucket_bytes) {
  if (!active()) return;
  // Buckets of one dtype and device, in order, each at most bucket_bytes (or one big tensor).
  struct Bucket {
    std::vector<torch::Tensor> members;
    size_t bytes = 0;
  };
  std::vector<Bucket> buckets;
  std::map<std::pair<int, std::string>, size_t> open;  // (dtype, device) → bucket being filled
  for (const auto& t : tensors) {
    const auto key = std::make_pair(static_cast<int>(t.scalar_type()), t.device().str());
    const size_t bytes = static_cast<size_t>(t.numel()) * t.element_size();
    auto it = open.find(key);
    if (it == open.end() || buckets[it->second].bytes + bytes > bucket_bytes) {
      buckets.emplace_back();
      open[key] = buckets.size() - 1;
      it = open.find(key);
    }
    buckets[it->second].members.push_back(t);
    buckets[it->second].bytes += bytes;
  }
  try {
    std::vector<torch::Tensor> flats;
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    for (auto& bucket : buckets) {
      std::vector<torch::Tensor> views;
      for (const auto& t : bucket.members) views.push_back(t.detach().reshape({-1}));
      flats.push_back(torch::cat(views));
      std::vector<at::Tensor> one = {flats.back()};
      works.push_back(impl_->group->allreduce(one, c10d::AllreduceOptions{}));
    }
    for (size_t b = 0; b < buckets.size(); ++b) {
      works[b]->wait();
      int64_t offset = 0;
      for (auto& t : buckets[b].members) {
        t.detach().copy_(flats[b].narrow(0, offset, t.numel()).view_as(t));
        offset += t.numel();
      }
    }
  } catch (const std::exception& e) {
    fail("summing the gradients", e);
  }
}

int64_t Distributed::all_reduce_max(int64_t value) {
  if (!active()) return value;
  try {
    std::vector<at::Tensor> one = {torch::full({1}, value, torch::TensorOptions(torch::kLong).device(impl_->device))};
    c10d::AllreduceOptions options;
    options.reduceOp = c10d::ReduceOp::MAX;
    impl_->group->allreduce(one, options)->wait();
    return one[0].to(torch::kCPU).item<int64_t>();
  } catch (const std::exception& e) {
    fail("agreeing on when to stop", e);
  }
}

std::string Distributed::share_from_main(const std::string& key, const std::string& bytes) {
  if (!active()) return bytes;
  const std::string full_key = "nmt/" + key;
  try {
    if (is_main()) {
      impl_->store->set(full_key, std::vector<uint8_t>(bytes.begin(), bytes.end()));
      return bytes;
    }
    const std::vector<uint8_t> got = impl_->store->get(full_key);
    return std::string(got.begin(), got.end());
  } catch (const std::exception& e) {
    fail(fmt::format("receiving '{}' from rank 0", key), e);
  }
}

}  // namespace nmt::train
