// The chief's side of checkpoints, as plain functions: shard snapshots + run position -> a
// checkpoint, and a checkpoint -> the setups that restore every shard. The files themselves are
// checkpoint/checkpoint_store's.
#pragma once

#include "checkpoint/checkpoint_format.hpp"
#include "checkpoint/checkpoint_store.hpp"
#include "checkpoint/shard_file_writer.hpp"
#include "compute/optimizer_rules.hpp"
#include "config/cluster_options.hpp"
#include "config/train_options.hpp"
#include "control/table_sweep.hpp"
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

/// The manifest of a checkpoint taken `at` (its files aside), with the input scaling and class
/// names of the data the run trains on.
checkpoint_manifest checkpoint_manifest_for(const placement_plan& plan, const model_spec& spec,
                                            const optimizer_params& shard_opt, const train_settings& train,
                                            const run_settings& cluster, const run_position& at,
                                            const data_splits& data);

/// A checkpoint's shard files and where each piece of them is read: every shard keeps its
/// snapshot ((save_atom, snapshot_read): `layouts`, indexed by shard) and the chief reads it a
/// chunk at a time, each variable's values and slots in row order from the parts that hold them
/// (control/table_sweep), and writes each chunk on (checkpoint/shard_file_writer). A file holds
/// the variables whose first part its shard holds, whole (docs/checkpoint_format.md).
class checkpoint_reads {
public:
  /// Save id's snapshots, in chunks of at most chunk_floats values. REQUIRES: layouts has one
  /// entry per plan shard.
  checkpoint_reads(const placement_plan& plan, uint64_t id, const std::vector<snapshot_piece>& layouts,
                   size_t chunk_floats);

  struct file {
    uint32_t shard = 0;
    uint64_t version = 0;
    std::vector<shard_file_writer::entry> entries; ///< a slot is there where some part has it
  };
  /// One chunk of one entry's values (which 0) or slot (1, 2), in the order the files hold them.
  struct step {
    uint32_t file = 0, entry = 0, variable = 0, which = 0;
    size_t chunk = 0;
  };

  /// The files, by shard.
  const std::vector<file>& files() const { return files_; }
  /// Every chunk of every file, in file order.
  const std::vector<step>& steps() const { return steps_; }
  /// The chunk's floats, and where it starts in its array.
  size_t floats(const step& st) const;
  size_t offset(const step& st) const;
  /// Its reads: (shard, snapshot_read), one per part holding rows of it.
  std::vector<std::pair<uint32_t, snapshot_read>> reads(const step& st) const;
  /// Places a read's piece into the chunk (floats(st) values); protocol_error for a piece that is
  /// not one of its reads.
  caf::error place(const step& st, const variable_slice& got, float* chunk) const;

private:
  uint64_t id_ = 0;
  std::vector<table_sweep> sweeps_; // by variable
  std::vector<file> files_;
  std::vector<step> steps_;
};

/// Fails with invalid_config, naming both (and path when given), when the checkpoint of manifest m
/// was taken with another number of shards, placement or partitioner than plan.
caf::error check_same_placement(const checkpoint_manifest& m, const placement_plan& plan, const std::string& path);

/// The pieces that restore one shard from checkpoint c after a setup with `pieces`
/// (messages/shard_protocol.hpp, setup_piece): each of its parts' values and the slots the
/// checkpoint holds, in windows of at most max_floats values (whole rows), each read from c's
/// files when asked for (a table split by mod: every parts-th row, from windows of 16 MiB), then
/// the last piece. So a restoring chief holds one piece at a time.
class restore_pieces {
public:
  /// REQUIRES: plan is c's placement (check_same_placement).
  restore_pieces(checkpoint_on_disk c, const placement_plan& plan, uint32_t shard, size_t max_floats);

  /// The pieces, the last included.
  size_t count() const { return steps_.size() + 1; }
  /// Piece i, read from the files. Fails with file_error naming the file, or corrupt_data when
  /// the checkpoint lacks one of the shard's variables.
  caf::expected<setup_piece> piece(size_t i) const;

private:
  struct step {
    uint32_t part = 0, which = 0, home = 0, first_row = 0, rows = 0;
    shard_file_index::array array;
  };
  checkpoint_on_disk c_;
  placement_plan plan_;
  std::vector<step> steps_;
  std::string missing_; // a variable of the shard the checkpoint lacks
};

/// Adds shard `setup.shard`'s values, optimizer slots and version from checkpoint c to setup
/// (whose plan must be c's placement): whole parts, read by restore_pieces. Fails as
/// check_same_placement does, or with file_error naming the file.
caf::error restore_into(const checkpoint_on_disk& c, shard_setup& setup);

} // namespace actorps
