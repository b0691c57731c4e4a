// Partitioning, placement plans and their table.
#include "control/placement.hpp"

#include "common/enum_names.hpp"
#include "common/log.hpp"
#include "compute/optimizer_rules.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace actorps {

const char* to_string(placement_strategy s) {
  switch (s) {
    case placement_strategy::round_robin: return "round-robin";
    case placement_strategy::balanced: return "balanced";
  }
  return "unknown";
}

std::optional<placement_strategy> parse_placement(const std::string& name) {
  constexpr placement_strategy all[] = {placement_strategy::round_robin, placement_strategy::balanced};
  return parse_by_name(name, all);
}

bool is_table_partition(const std::string& text) {
  return text == "div" || text == "mod";
}

namespace {

// Table k's parts, in row order.
std::vector<const variable_part*> table_parts(const placement_plan& plan, uint32_t k) {
  std::vector<const variable_part*> out;
  for (auto& p : plan.parts)
    if (p.variable == k)
      out.push_back(&p);
  return out;
}

} // namespace

bool rows_permuted(const placement_plan& plan, uint32_t k) {
  return plan.table_partition == "mod" && k < plan.variables.size() && plan.variables[k].table
         && table_parts(plan, k).size() > 1;
}

uint32_t row_stride(const placement_plan& plan, uint32_t k) {
  return rows_permuted(plan, k) ? static_cast<uint32_t>(table_parts(plan, k).size()) : 1;
}

// (no allocation: a checkpoint maps every row of a table of millions)
uint32_t stored_row(const placement_plan& plan, uint32_t k, uint32_t row) {
  if (plan.table_partition != "mod" || !plan.variables.at(k).table)
    return row;
  uint32_t n = 0;
  for (auto& p : plan.parts)
    n += p.variable == k ? 1 : 0;
  uint32_t j = 0;
  for (auto& p : plan.parts)
    if (p.variable == k && j++ == row % n)
      return static_cast<uint32_t>(p.row_begin) + row / n;
  return row;
}

uint32_t table_row(const placement_plan& plan, uint32_t k, uint32_t stored) {
  if (plan.table_partition != "mod" || !plan.variables.at(k).table)
    return stored;
  uint32_t n = 0, j = 0, begin = 0;
  for (auto& p : plan.parts)
    if (p.variable == k) {
      if (static_cast<uint32_t>(p.row_begin) <= stored) {
        j = n;
        begin = static_cast<uint32_t>(p.row_begin);
      }
      ++n;
    }
  return (stored - begin) * n + j;
}

placement_plan make_placement(const std::vector<variable_spec>& vars, uint32_t shards,
                              placement_strategy strategy, const partitioner& split, const std::string& table_split) {
  placement_plan plan;
  plan.strategy = to_string(strategy);
  plan.partitioner = to_string(split);
  plan.table_partition = table_split;
  plan.shards = shards;
  std::vector<size_t> bytes; // per part
  for (uint32_t k = 0; k < vars.size(); ++k) {
    auto& v = vars[k];
    plan.variables.push_back({v.name, v.rows, v.cols, v.moving_decay, v.table});
    int row = 0;
    // (an embedding table is split over every shard, by rows: workers read a few rows of each)
    const auto parts = !v.table                ? partition_rows(v, split)
                       : table_split == "mod" ? mod_split(v.rows, shards)
                                              : partition_rows(v, partitioner{partitioner::rule::fixed, shards});
    for (int rows : parts) {
      plan.parts.push_back({k, row, rows, 0});
      bytes.push_back(part_bytes(plan, plan.parts.back()));
      row += rows;
    }
  }
  if (strategy == placement_strategy::round_robin) {
    for (size_t i = 0; i < plan.parts.size(); ++i)
      plan.parts[i].shard = static_cast<uint32_t>(i % shards);
    return plan;
  }
  std::vector<size_t> order(plan.parts.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return bytes[a] > bytes[b]; });
  std::vector<size_t> load(shards, 0);
  for (size_t i : order) {
    auto s = static_cast<uint32_t>(std::min_element(load.begin(), load.end()) - load.begin());
    plan.parts[i].shard = s;
    load[s] += bytes[i];
  }
  return plan;
}

size_t part_floats(const placement_plan& plan, const variable_part& part) {
  return static_cast<size_t>(part.rows) * static_cast<size_t>(plan.variables[part.variable].cols);
}

size_t part_bytes(const placement_plan& plan, const variable_part& part) {
  return part_floats(plan, part) * sizeof(float);
}

uint32_t part_offset(const placement_plan& plan, const variable_part& part) {
  return static_cast<uint32_t>(part.row_begin) * static_cast<uint32_t>(plan.variables[part.variable].cols);
}

std::vector<size_t> bytes_per_shard(const placement_plan& plan) {
  std::vector<size_t> out(plan.shards, 0);
  for (auto& part : plan.parts)
    out[part.shard] += part_bytes(plan, part);
  return out;
}

std::string part_name(const placement_plan& plan, uint32_t i) {
  auto& part = plan.parts[i];
  auto& var = plan.variables[part.variable];
  if (part.rows == var.rows)
    return var.name;
  uint32_t j = 0; // parts of one variable are adjacent, in row order
  while (j < i && plan.parts[i - j - 1].variable == part.variable)
    ++j;
  return cat(var.name, "/part_", j);
}

std::string ps_device(uint32_t shard) {
  return "/job:ps/task:" + std::to_string(shard) + "/device:CPU:0";
}

std::string placement_table(const placement_plan& plan) {
  std::string out;
  char line[200];
  const bool tables = std::any_of(plan.variables.begin(), plan.variables.end(), [](const variable_info& v) { return v.table; });
  const std::string split = tables ? ", tables by " + plan.table_partition : std::string{};
  std::snprintf(line, sizeof line, "placement (%s, partitioner %s%s, %u shards):\n  %-24s %-10s %10s  %-5s  %s\n",
                plan.strategy.c_str(), plan.partitioner.c_str(), split.c_str(), plan.shards, "variable", "shape", "bytes",
                "shard", "device");
  out += line;
  for (uint32_t i = 0; i < plan.parts.size(); ++i) {
    auto& part = plan.parts[i];
    std::string shape = std::to_string(part.rows) + "x" + std::to_string(plan.variables[part.variable].cols);
    std::snprintf(line, sizeof line, "  %-24s %-10s %10zu  %-5u  %s", part_name(plan, i).c_str(), shape.c_str(),
                  part_bytes(plan, part), part.shard, ps_device(part.shard).c_str());
    out += line;
    auto& var = plan.variables[part.variable];
    if (var.table && part.rows != var.rows) // (which rows: TF's partition strategy)
      out += rows_permuted(plan, part.variable)
               ? cat("  rows r with r mod ", table_parts(plan, part.variable).size(), " = ",
                     table_row(plan, part.variable, part.row_begin))
               : cat("  rows [", part.row_begin, ", ", part.row_begin + part.rows, ")");
    out += "\n";
  }
  auto bytes = bytes_per_shard(plan);
  out += "  bytes per shard:";
  for (size_t s = 0; s < bytes.size(); ++s)
    out += " " + std::to_string(s) + "=" + std::to_string(bytes[s]);
  return out;
}

std::vector<uint32_t> parts_of(const placement_plan& plan, uint32_t s) {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < plan.parts.size(); ++i)
    if (plan.parts[i].shard == s)
      out.push_back(i);
  return out;
}

uint32_t home_shard(const placement_plan& plan, uint32_t k) {
  for (auto& part : plan.parts)
    if (part.variable == k)
      return part.shard;
  return 0;
}

std::string check_parts(const placement_plan& plan) {
  if (!is_table_partition(plan.table_partition))
    return cat("unknown table partition \"", plan.table_partition, "\" (div or mod)");
  for (auto& v : plan.variables)
    if (is_moving_statistic(v.name) != (v.moving_decay > 0.0f && v.moving_decay < 1.0f))
      return cat(v.name, " has moving decay ", v.moving_decay, is_moving_statistic(v.name)
                 ? " (a moving statistic needs 0 < decay < 1)" : " (only a batchnorm's moving statistic has one)");
  uint32_t k = 0;
  int32_t row = 0;
  for (auto& part : plan.parts) {
    if (part.shard >= plan.shards)
      return cat("a part is on shard ", part.shard, " of ", plan.shards);
    if (k < plan.variables.size() && row == plan.variables[k].rows && part.variable == k + 1) {
      ++k;
      row = 0;
    }
    if (part.variable != k || part.row_begin != row || part.rows <= 0 || k >= plan.variables.size())
      return cat("the parts do not cover variable ", k, " in row order");
    row += part.rows;
    if (row > plan.variables[k].rows)
      return cat("the parts of ", plan.variables[k].name, " have more than its ", plan.variables[k].rows, " rows");
  }
  if (plan.variables.empty() ? !plan.parts.empty() : k + 1 != plan.variables.size() || row != plan.variables[k].rows)
    return "the parts do not cover every variable";
  return {};
}

} // namespace actorps
