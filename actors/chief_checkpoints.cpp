// Converting between shard snapshots and checkpoints.
#include "actors/chief_checkpoints.hpp"

#include <cstdio>

#include "actors/parameter_store.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"

#include <map>

namespace actorps {

std::vector<checkpoint_variable> checkpoint_variables(const placement_plan& plan) {
  std::vector<checkpoint_variable> out;
  for (size_t k = 0; k < plan.variables.size(); ++k)
    out.push_back({plan.variables[k].name, plan.variables[k].rows, plan.variables[k].cols, plan.shard_of[k]});
  return out;
}

checkpoint make_checkpoint(const placement_plan& plan, const model_spec& spec, const optimizer_params& shard_opt,
                           const train_settings& train, const cluster_settings& cluster, const run_position& at,
                           const std::vector<shard_snapshot>& snapshots) {
  checkpoint c;
  auto& m = c.manifest;
  m.global_step = at.global_step;
  m.examples = at.examples;
  m.train_seconds = at.train_seconds;
  m.validation_accuracy = at.validation_accuracy;
  m.model = spec.text();
  m.placement = plan.strategy;
  m.variables = checkpoint_variables(plan);
  auto o = to_optimizer_config(shard_opt);
  m.optimizer = {o.kind, o.learning_rate, o.momentum, o.beta1, o.beta2, o.epsilon, o.decay_rate, o.decay_steps};
  m.mode = to_string(cluster.mode);
  m.batch_size = train.batch_size;
  m.seed = train.seed;
  m.workers = static_cast<uint32_t>(cluster.workers.size());
  for (uint32_t s = 0; s < snapshots.size(); ++s) {
    shard_checkpoint sc;
    sc.shard = s;
    sc.version = snapshots[s].version;
    std::map<uint32_t, checkpoint_variable_state> vars;
    for (auto& v : snapshots[s].values)
      vars[v.variable] = {v.variable, v.data.to_vector(), {}, {}};
    for (auto& v : snapshots[s].slot0)
      vars[v.variable].slot0 = v.data.to_vector();
    for (auto& v : snapshots[s].slot1)
      vars[v.variable].slot1 = v.data.to_vector();
    for (auto& [k, v] : vars)
      sc.variables.push_back(std::move(v));
    c.shards.push_back(std::move(sc));
  }
  return c;
}

caf::error restore_into(const checkpoint& c, shard_setup& setup) {
  if (c.shards.size() != setup.plan.shards || c.manifest.variables != checkpoint_variables(setup.plan))
    return caf::make_error(errc::invalid_config,
                           cat("the checkpoint places its variables on ", c.shards.size(),
                               " shards differently from this run (", setup.plan.shards, " shards, placement ",
                               setup.plan.strategy, "): restore with the same cluster.ps and cluster.placement"));
  auto& sc = c.shards[setup.shard];
  setup.initial.clear();
  setup.slot0.clear();
  setup.slot1.clear();
  for (auto& v : sc.variables) {
    setup.initial.push_back({v.index, 0, {v.values}});
    if (!v.slot0.empty())
      setup.slot0.push_back({v.index, 0, {v.slot0}});
    if (!v.slot1.empty())
      setup.slot1.push_back({v.index, 0, {v.slot1}});
  }
  setup.version = sc.version;
  return caf::none;
}

} // namespace actorps
