// Two or more real ParameterShards set up for a model with an embedding table (variable 0): each
// makes its part of the table from the seed, the chief sends the other variables' initial values
// (model/init's). Shared by the actor tests that read or train a table.
#pragma once

#include "actors/parameter_shard.hpp"
#include "control/placement.hpp"
#include "control/slicing.hpp"
#include "model/init.hpp"
#include "model/model_spec.hpp"
#include "tests/support/actor_fixture.hpp"

#include <string>
#include <vector>

namespace actorps::test {

/// Spawns plan.shards shards (kept by the fixture) and sets each up with `optimizer` at rate 0.5,
/// one worker, the table made from `seed`.
inline std::vector<parameter_shard_actor> table_shards(actor_fixture& f, const model_spec& spec, const placement_plan& plan,
                                                       const std::string& optimizer, uint64_t seed) {
  const auto dense = initial_values(spec, {}, seed, false);
  std::vector<parameter_shard_actor> shards;
  for (uint32_t s = 0; s < plan.shards; ++s) {
    shards.push_back(f.keep(make_parameter_shard(*f.sys, {s})));
    shard_setup setup;
    setup.shard = s;
    setup.plan = plan;
    setup.optimizer = {optimizer, 0.5f};
    setup.workers = 1;
    setup.generated = {0};
    setup.table_seed = seed;
    for (auto& r : held_ranges(plan, s))
      if (!plan.variables[r.variable].table)
        setup.initial.push_back({r.variable, r.offset,
                                 {std::vector<float>(dense[r.variable].begin() + r.offset,
                                                     dense[r.variable].begin() + r.offset + r.count)}});
    BOOST_REQUIRE(f.ask<setup_reply>(shards.back(), init_atom_v, setup));
  }
  return shards;
}

} // namespace actorps::test
