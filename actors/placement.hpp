// Where variables live: round-robin in creation order (TensorFlow's replica_device_setter rule)
// or size-balanced. Plain logic, computed once by the chief.
#pragma once

#include "messages/shard_protocol.hpp"
#include "model/mlp_spec.hpp"

#include <optional>
#include <string>
#include <vector>

namespace actorps {

/// Placement strategies.
enum class placement_strategy {
  round_robin, ///< variable k -> shard k % S
  balanced,    ///< largest variable first onto the shard holding the fewest bytes
};

const char* to_string(placement_strategy s);
std::optional<placement_strategy> parse_placement(const std::string& name);

/// Returns the plan for vars on `shards` shards. REQUIRES: shards >= 1.
placement_plan make_placement(const std::vector<variable_spec>& vars, uint32_t shards,
                              placement_strategy strategy);

/// Returns the bytes each shard holds under plan.
std::vector<size_t> bytes_per_shard(const placement_plan& plan);

/// Returns the plan as a table: variable, shape, bytes, shard; then bytes per shard.
std::string placement_table(const placement_plan& plan);

/// Returns the indices of the variables shard s holds, in creation order.
std::vector<uint32_t> variables_of(const placement_plan& plan, uint32_t s);

} // namespace actorps
