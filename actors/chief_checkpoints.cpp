// Converting between shard snapshots and checkpoints.
#include "actors/chief_checkpoints.hpp"

#include <cstdio>

#include "control/parameter_store.hpp"
#include "control/placement.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "saved_model/saved_model.hpp"

#include <algorithm>

namespace actorps {

std::vector<checkpoint_variable> checkpoint_variables(const placement_plan& plan) {
  std::vector<checkpoint_variable> out;
  for (uint32_t k = 0; k < plan.variables.size(); ++k)
    out.push_back({plan.variables[k].name, plan.variables[k].rows, plan.variables[k].cols, home_shard(plan, k)});
  return out;
}

namespace {

// Calls fn(stored row, table row) for each row of the part of variable k that starts at offset
// with n values: a checkpoint holds a table's rows in order, its parts as they store them
// (control/placement's stored_row: the same rows under div, every parts-th under mod).
template <class F>
void each_row(const placement_plan& plan, uint32_t k, size_t offset, size_t n, F fn) {
  const auto cols = static_cast<size_t>(plan.variables[k].cols);
  const size_t begin = offset / cols, first = table_row(plan, k, static_cast<uint32_t>(begin)), stride = row_stride(plan, k);
  for (size_t r = begin; r < (offset + n) / cols; ++r) // (a part's rows: every stride-th table row)
    fn(r, first + (r - begin) * stride);
}

// Puts the parts the shards sent (values or one optimizer slot) together into whole variables.
void merge_parts(const placement_plan& plan, const std::vector<shard_snapshot>& snapshots,
                 std::vector<variable_slice> shard_snapshot::*which, std::vector<std::vector<float>>& out) {
  for (auto& snap : snapshots)
    for (auto& part : snap.*which) {
      auto& whole = out[part.variable];
      const auto cols = static_cast<size_t>(plan.variables[part.variable].cols);
      if (whole.empty())
        whole.resize(static_cast<size_t>(plan.variables[part.variable].rows) * cols);
      const float* values = part.data.values.data();
      if (!rows_permuted(plan, part.variable)) {
        std::copy(values, values + part.data.values.size(), whole.begin() + part.offset);
        continue;
      }
      each_row(plan, part.variable, part.offset, part.data.values.size(), [&](size_t stored, size_t row) {
        const float* from = values + (stored * cols - part.offset);
        std::copy(from, from + cols, whole.begin() + static_cast<std::ptrdiff_t>(row * cols));
      });
    }
}

// The part of whole starting at offset with n values, or nothing when whole is empty (no slot).
std::vector<variable_slice> cut(const placement_plan& plan, uint32_t k, size_t offset, size_t n,
                                const std::vector<float>& whole) {
  if (whole.empty())
    return {};
  if (!rows_permuted(plan, k))
    return {{k, static_cast<uint32_t>(offset), tensor_copy(whole.data() + offset, n)}};
  const auto cols = static_cast<size_t>(plan.variables[k].cols);
  float_vector part(n);
  each_row(plan, k, offset, n, [&](size_t stored, size_t row) {
    std::copy(whole.data() + row * cols, whole.data() + (row + 1) * cols, part.data() + (stored * cols - offset));
  });
  return {{k, static_cast<uint32_t>(offset), {std::move(part)}}};
}

} // namespace

checkpoint make_checkpoint(const placement_plan& plan, const model_spec& spec, const optimizer_params& shard_opt,
                           const train_settings& train, const run_settings& cluster, const run_position& at,
                           const std::vector<shard_snapshot>& snapshots, const data_splits& data) {
  checkpoint c;
  auto& m = c.manifest;
  record_scaling(data.scaling, m);
  m.class_names = data.class_names; // (what the model tools show)
  m.global_step = at.global_step;
  m.examples = at.examples;
  m.train_seconds = at.train_seconds;
  m.validation_accuracy = at.validation_accuracy;
  m.members = at.members;
  m.data_plan = at.data_plan;
  m.model = spec.text();
  m.placement = plan.strategy;
  m.variables = checkpoint_variables(plan);
  auto o = to_optimizer_config(shard_opt);
  m.optimizer = {o.kind, o.learning_rate, o.momentum, o.beta1, o.beta2, o.epsilon, o.decay_rate, o.decay_steps};
  m.mode = to_string(cluster.mode);
  m.batch_size = train.batch_size;
  m.seed = train.seed;
  m.workers = static_cast<uint32_t>(cluster.workers.size());
  m.partitioner = plan.partitioner;
  // Whole variables, each in the file of the shard holding its first part.
  const size_t n = plan.variables.size();
  std::vector<std::vector<float>> values(n), slot0(n), slot1(n);
  merge_parts(plan, snapshots, &shard_snapshot::values, values);
  merge_parts(plan, snapshots, &shard_snapshot::slot0, slot0);
  merge_parts(plan, snapshots, &shard_snapshot::slot1, slot1);
  for (uint32_t s = 0; s < snapshots.size(); ++s) {
    shard_checkpoint sc;
    sc.shard = s;
    sc.version = snapshots[s].version;
    c.shards.push_back(std::move(sc));
  }
  for (uint32_t k = 0; k < n; ++k)
    c.shards.at(home_shard(plan, k))
      .variables.push_back({k, std::move(values[k]), std::move(slot0[k]), std::move(slot1[k])});
  return c;
}

caf::error check_same_placement(const checkpoint& c, const placement_plan& plan, const std::string& path) {
  if (c.shards.size() != plan.shards || c.manifest.variables != checkpoint_variables(plan)
      || c.manifest.partitioner != plan.partitioner)
    return caf::make_error(errc::invalid_config,
                           cat("the checkpoint", path.empty() ? "" : " " + path, " places its variables on ",
                               c.shards.size(), " shards (placement ",
                               c.manifest.placement, ", partitioner ", c.manifest.partitioner,
                               ") differently from this run (", plan.shards, " shards, placement ", plan.strategy,
                               ", partitioner ", plan.partitioner,
                               "): restore with the same cluster.ps, cluster.placement and cluster.partitioner"));
  return caf::none;
}

caf::error restore_into(const checkpoint& c, shard_setup& setup) {
  auto& plan = setup.plan;
  if (auto err = check_same_placement(c, plan, ""))
    return err;
  setup.initial.clear();
  setup.slot0.clear();
  setup.slot1.clear();
  for (uint32_t i : parts_of(plan, setup.shard)) {
    auto& part = plan.parts[i];
    const checkpoint_variable_state* whole = nullptr;
    for (auto& v : c.shards[home_shard(plan, part.variable)].variables)
      if (v.index == part.variable)
        whole = &v;
    if (whole == nullptr) // read_checkpoint verified the files against the manifest
      return caf::make_error(errc::corrupt_data, cat("the checkpoint lacks ", plan.variables[part.variable].name));
    const size_t offset = part_offset(plan, part);
    const size_t n = part_floats(plan, part);
    for (auto [to, from] : {std::pair{&setup.initial, &whole->values}, std::pair{&setup.slot0, &whole->slot0},
                            std::pair{&setup.slot1, &whole->slot1}})
      for (auto& slice : cut(plan, part.variable, offset, n, *from))
        to->push_back(std::move(slice));
  }
  setup.version = c.shards[setup.shard].version;
  return caf::none;
}

} // namespace actorps
