// Where variables live: round-robin in creation order (TensorFlow's replica_device_setter rule)
// or size-balanced, after an optional partitioner has split large variables by rows (TF's
// fixed_size_partitioner / variable_axis_size_partitioner): each part is then placed like a
// variable of its own. Plain logic, computed once by the chief.
#pragma once

#include "messages/shard_protocol.hpp"
#include "model/partitioner.hpp"
#include "model/variable_spec.hpp"

#include <optional>
#include <string>
#include <vector>

namespace actorps {

/// Placement strategies.
enum class placement_strategy {
  round_robin, ///< part k -> shard k % S
  balanced,    ///< largest part first onto the shard holding the fewest bytes
};

const char* to_string(placement_strategy s);
std::optional<placement_strategy> parse_placement(const std::string& name);

/// Returns the plan for vars on `shards` shards. An embedding table (variable_spec::table) is
/// split into `shards` parts of nearly equal rows whatever `parts` says (TF's "div" partition
/// strategy of a partitioned embedding), each then placed as the strategy places parts (with
/// round-robin and the table first: part j on shard j). REQUIRES: shards >= 1.
placement_plan make_placement(const std::vector<variable_spec>& vars, uint32_t shards,
                              placement_strategy strategy, const partitioner& parts = {},
                              const std::string& table_partition = "div");

/// Whether `text` is a table partition: "div" or "mod".
bool is_table_partition(const std::string& text);

/// An embedding table's parts hold its rows in "stored" order: under "div" row r is stored at r
/// (part j holds a contiguous range); under "mod" (TF's partition strategy) part j holds the rows
/// r with r mod parts = j, in order, so row r is stored at part r mod parts's first row + r / parts.
/// Row slices name stored rows; checkpoints, evaluation and exports hold table rows.
/// REQUIRES: k is a table of plan, row below its rows.
uint32_t stored_row(const placement_plan& plan, uint32_t k, uint32_t row);

/// The table row stored at `stored` (the inverse of stored_row).
uint32_t table_row(const placement_plan& plan, uint32_t k, uint32_t stored);

/// Whether table k's stored order is not its rows' (mod over more than one part).
bool rows_permuted(const placement_plan& plan, uint32_t k);

/// Within one part of table k, consecutive stored rows are this many table rows apart: the
/// parts' count under mod, else 1. A part's stored row begin + i is table row
/// table_row(plan, k, begin) + i * row_stride(plan, k).
uint32_t row_stride(const placement_plan& plan, uint32_t k);

/// Returns the bytes of a part.
size_t part_bytes(const placement_plan& plan, const variable_part& part);

/// Returns where a part starts in its row-major variable (row_begin x cols) and how many floats
/// it has: the whole-variable range its slices are addressed by.
uint32_t part_offset(const placement_plan& plan, const variable_part& part);
size_t part_floats(const placement_plan& plan, const variable_part& part);

/// Returns the bytes each shard holds under plan.
std::vector<size_t> bytes_per_shard(const placement_plan& plan);

/// Returns the plan as a table: variable (or part), shape, bytes, shard and its device in
/// TensorFlow's name; then bytes per shard.
std::string placement_table(const placement_plan& plan);

/// TensorFlow's name of the device shard s's variables live on: "/job:ps/task:1/device:CPU:0".
std::string ps_device(uint32_t shard);

/// Returns the indices (into plan.parts) of the parts shard s holds, in creation order.
std::vector<uint32_t> parts_of(const placement_plan& plan, uint32_t s);

/// Returns the name of part i: the variable's, with "/part_J" when the variable is split.
std::string part_name(const placement_plan& plan, uint32_t i);

/// Returns the shard of variable k's first part (where a checkpoint stores the whole variable).
/// REQUIRES: k < plan.variables.size() and plan.parts covers it.
uint32_t home_shard(const placement_plan& plan, uint32_t k);

/// Returns an empty string when plan.parts cover every variable exactly, in order, on shards
/// below plan.shards; else what is wrong.
std::string check_parts(const placement_plan& plan);

} // namespace actorps
