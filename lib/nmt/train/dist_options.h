#pragma once
// Where a process sits in a data-parallel job (torch-free: the command line fills it).
#include <string>

namespace nmt::train {

// Unset fields (-1 / empty) come from the launcher variables torchrun sets: RANK, WORLD_SIZE,
// LOCAL_RANK, MASTER_ADDR, MASTER_PORT.
struct DistOptions {
  int rank = -1;
  int world_size = -1;
  int local_rank = -1;
  std::string master_addr;
  int master_port = -1;
  double timeout_s = 1800;  // one collective or store read may wait this long (PyTorch's default)

  // Fills unset fields from the environment, then defaults (a single process: rank 0 of 1,
  // 127.0.0.1:29500). Inconsistent values (rank outside the world, bad port) → UsageError.
  DistOptions resolved() const;
};

}  // namespace nmt::train
