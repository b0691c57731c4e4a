// Tests: a checkpoint assembled in memory from every shard's whole snapshot, through the reads
// the chief's save makes (actors/chief_checkpoints' checkpoint_reads): a test's view of what the
// chief writes.
#pragma once

#include "actors/chief_checkpoints.hpp"

#include <vector>

namespace actorps {

/// Assembles a checkpoint from every shard's snapshot (indexed by shard) through the same reads,
/// with the input scaling and class names of the data the run trains on.
checkpoint make_checkpoint(const placement_plan& plan, const model_spec& spec, const optimizer_params& shard_opt,
                           const train_settings& train, const run_settings& cluster, const run_position& at,
                           const std::vector<shard_snapshot>& snapshots, const data_splits& data);

} // namespace actorps
