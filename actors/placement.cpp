// Placement plans and their table.
#include "actors/placement.hpp"

#include "common/enum_names.hpp"

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

placement_plan make_placement(const std::vector<variable_spec>& vars, uint32_t shards,
                              placement_strategy strategy) {
  placement_plan plan;
  plan.strategy = to_string(strategy);
  plan.shards = shards;
  for (auto& v : vars)
    plan.variables.push_back({v.name, v.rows, v.cols});
  plan.shard_of.resize(vars.size());
  if (strategy == placement_strategy::round_robin) {
    for (size_t k = 0; k < vars.size(); ++k)
      plan.shard_of[k] = static_cast<uint32_t>(k % shards);
    return plan;
  }
  std::vector<size_t> order(vars.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return vars[a].bytes() > vars[b].bytes(); });
  std::vector<size_t> load(shards, 0);
  for (size_t k : order) {
    auto s = static_cast<uint32_t>(std::min_element(load.begin(), load.end()) - load.begin());
    plan.shard_of[k] = s;
    load[s] += vars[k].bytes();
  }
  return plan;
}

std::vector<size_t> bytes_per_shard(const placement_plan& plan) {
  std::vector<size_t> out(plan.shards, 0);
  for (size_t k = 0; k < plan.variables.size(); ++k)
    out[plan.shard_of[k]] += static_cast<size_t>(plan.variables[k].rows) * plan.variables[k].cols * sizeof(float);
  return out;
}

std::string placement_table(const placement_plan& plan) {
  std::string out;
  char line[160];
  std::snprintf(line, sizeof line, "placement (%s, %u shards):\n  %-16s %-10s %10s  %s\n",
                plan.strategy.c_str(), plan.shards, "variable", "shape", "bytes", "shard");
  out += line;
  for (size_t k = 0; k < plan.variables.size(); ++k) {
    auto& v = plan.variables[k];
    std::string shape = std::to_string(v.rows) + "x" + std::to_string(v.cols);
    std::snprintf(line, sizeof line, "  %-16s %-10s %10zu  %u\n", v.name.c_str(), shape.c_str(),
                  static_cast<size_t>(v.rows) * v.cols * sizeof(float), plan.shard_of[k]);
    out += line;
  }
  auto bytes = bytes_per_shard(plan);
  out += "  bytes per shard:";
  for (size_t s = 0; s < bytes.size(); ++s)
    out += " " + std::to_string(s) + "=" + std::to_string(bytes[s]);
  return out;
}

std::vector<uint32_t> variables_of(const placement_plan& plan, uint32_t s) {
  std::vector<uint32_t> out;
  for (uint32_t k = 0; k < plan.shard_of.size(); ++k)
    if (plan.shard_of[k] == s)
      out.push_back(k);
  return out;
}

} // namespace actorps
