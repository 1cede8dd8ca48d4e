#pragma once
// The run directory (--out) a training run owns, and the model directory it may start from
// (--init-from): whether a run starts afresh or resumes, and what it refuses.
#include <filesystem>

#include "nmt/train/checkpoint.h"
#include "nmt/train/options.h"

namespace nmt::train {

// Decides, with OUT locked, whether this run starts afresh (clearing what an earlier attempt
// of the same run left) or resumes, and refuses everything else: a directory nmt did not make,
// another run, a finished model without checkpoints. Returns true to resume.
bool claim_out_dir(const std::filesystem::path& out, const TrainOptions& o, const CheckpointManager& checkpoints);

// --init-from DIR: the directory holds a model whose architecture is this run's (vocabulary
// sizes aside: they come from DIR's subword models, which this run takes; joint or separate
// vocabularies must match, as the embeddings do). Checked before any work.
void check_init_from(const TrainOptions& o);
// With --init-from DIR: DIR's architecture (config.json's "model", and --separate-vocab as its
// subword files are) in `o`, for the options given on the command line to override; nothing
// when DIR has no readable config.json (check_init_from then says what is wrong).
void adopt_init_architecture(TrainOptions& o);

}  // namespace nmt::train
