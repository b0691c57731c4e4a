// The chief's side of checkpoints, as plain functions: shard snapshots + run position -> a
// checkpoint, and a checkpoint -> the setups that restore every shard. The files themselves are
// checkpoint/checkpoint_store's.
#pragma once

#include "checkpoint/checkpoint_format.hpp"
#include "compute/optimizer_rules.hpp"
#include "config/cluster_options.hpp"
#include "config/train_options.hpp"
#include "messages/shard_protocol.hpp"
#include "saved_model/saved_model.hpp"

#include <caf/error.hpp>

#include <string>
#include <vector>

namespace actorps {

/// Where the run stands when a checkpoint is taken.
struct run_position {
  int64_t global_step = 0;
  int64_t examples = 0;
  double train_seconds = 0.0;
  double validation_accuracy = 0.0;
  std::vector<uint32_t> members{}; ///< elastic: the live worker ids
  std::vector<int64_t> data_plan{}; ///< elastic: epoch_ledger::save()
};

/// The plan's variables with their shards, as a checkpoint records them.
std::vector<checkpoint_variable> checkpoint_variables(const placement_plan& plan);

/// Assembles a checkpoint from every shard's snapshot (indexed by shard), with the input scaling
/// and class names of the data the run trains on.
checkpoint make_checkpoint(const placement_plan& plan, const model_spec& spec, const optimizer_params& shard_opt,
                           const train_settings& train, const run_settings& cluster, const run_position& at,
                           const std::vector<shard_snapshot>& snapshots, const data_splits& data);

/// Fails with invalid_config, naming both (and c's path when given), when c was taken with another
/// number of shards, placement or partitioner than plan.
caf::error check_same_placement(const checkpoint& c, const placement_plan& plan, const std::string& path);

/// Adds shard `setup.shard`'s values, optimizer slots and version from c to setup (whose plan
/// must be c's placement): its parts cut from the whole variables c holds. Fails as
/// check_same_placement does.
caf::error restore_into(const checkpoint& c, shard_setup& setup);

} // namespace actorps
