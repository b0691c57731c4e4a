// Scope bookkeeping of a ps node.
#include "control/scope_table.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <algorithm>

namespace actorps {

const char* to_string(scope_phase p) {
  switch (p) {
    case scope_phase::in_session: return "in session";
    case scope_phase::kept: return "kept";
  }
  return "unknown";
}

std::string scope_label(const std::string& scope) {
  return scope.empty() ? std::string{"(none)"} : cat("\"", scope, "\"");
}

namespace {

std::string shape(const variable_info& v) {
  return cat(v.rows, "x", v.cols);
}

} // namespace

std::string plan_difference(const placement_plan& held, const placement_plan& wanted) {
  const size_t n = std::min(held.variables.size(), wanted.variables.size());
  for (size_t k = 0; k < n; ++k) {
    auto& a = held.variables[k];
    auto& b = wanted.variables[k];
    if (a.name != b.name)
      return cat("variable ", k, " is ", a.name, " (", shape(a), ") here, but ", b.name, " (", shape(b),
                 ") in this session's model");
    if (a.rows != b.rows || a.cols != b.cols)
      return cat(a.name, " is ", shape(a), " here, but ", shape(b), " in this session's model");
  }
  if (held.variables.size() != wanted.variables.size()) {
    auto& longer = held.variables.size() > n ? held : wanted;
    return cat(held.variables.size(), " variables here, ", wanted.variables.size(),
               " in this session's model (the first unmatched: ", longer.variables[n].name, " ",
               shape(longer.variables[n]), ")");
  }
  if (held.shards != wanted.shards || held.parts != wanted.parts)
    return cat("its variables were placed on ", held.shards, " shards (placement ", held.strategy, ", partitioner ",
               held.partitioner, "), this session places them on ", wanted.shards, " (placement ", wanted.strategy,
               ", partitioner ", wanted.partitioner, ")");
  return {};
}

caf::expected<scope_table::verdict> scope_table::begin(const shard_setup& setup) {
  auto& plan = setup.plan;
  const auto shard = setup.shard;
  if (to_string(setup.session.mode) == nullptr)
    return caf::make_error(errc::invalid_argument, cat("shard ", shard, ": unknown session mode ",
                                                       static_cast<unsigned>(setup.session.mode),
                                                       " (0 async, 1 sync, 2 ssp, 3 model-parallel, 4 in-graph)"));
  auto it = scopes_.find(plan.scope);
  if (it == scopes_.end()) {
    scopes_.emplace(plan.scope, entry{plan, setup.workers, setup.session, scope_phase::in_session});
    return verdict::create;
  }
  auto& held = it->second;
  if (auto diff = plan_difference(held.plan, plan); !diff.empty())
    return caf::make_error(errc::shape_mismatch, cat("shard ", shard, ": scope ", scope_label(plan.scope),
                                                     " does not match this session: ", diff));
  if (held.workers != setup.workers || held.session != setup.session)
    return caf::make_error(errc::invalid_argument,
                           cat("shard ", shard, ": scope ", scope_label(plan.scope), " was trained by ", held.workers,
                               " workers (", to_string(held.session.mode), "), this session has ", setup.workers, " (",
                               to_string(setup.session.mode), "): a session continues a scope with the same workers and mode"));
  it->second.phase = scope_phase::in_session;
  return verdict::attach;
}

void scope_table::end(const std::string& scope) {
  if (auto it = scopes_.find(scope); it != scopes_.end())
    it->second.phase = scope_phase::kept;
}

caf::error scope_table::may_drop(const std::string& scope, uint32_t shard) const {
  auto it = scopes_.find(scope);
  if (it == scopes_.end())
    return unknown(scope, shard);
  if (it->second.phase == scope_phase::in_session)
    return caf::make_error(errc::invalid_argument, cat("scope ", scope_label(scope),
                                                       " is in session: stop its chief first"));
  return caf::none;
}

caf::error scope_table::drop(const std::string& scope, uint32_t shard) {
  if (auto err = may_drop(scope, shard))
    return err;
  scopes_.erase(scope);
  return caf::none;
}

void scope_table::forget(const std::string& scope) {
  scopes_.erase(scope);
}

std::vector<std::string> scope_table::names() const {
  std::vector<std::string> out;
  for (auto& [name, e] : scopes_)
    out.push_back(name);
  return out;
}

caf::error scope_table::missing(const std::string& scope, uint32_t shard) const {
  if (scopes_.empty())
    return caf::make_error(errc::not_initialized, cat("shard ", shard, " holds no scope yet (a restarted ps node "
                                                      "waits for the chief to set it up)"));
  return unknown(scope, shard);
}

caf::error scope_table::unknown(const std::string& scope, uint32_t shard) const {
  std::string held;
  for (auto& [name, e] : scopes_)
    held += (held.empty() ? "" : ", ") + scope_label(name);
  return caf::make_error(errc::unknown_scope, cat("shard ", shard, " holds no scope ", scope_label(scope), " (it holds: ",
                                                  held.empty() ? std::string{"none"} : held, ")"));
}

} // namespace actorps
