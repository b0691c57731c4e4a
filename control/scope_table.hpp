// The scopes a ps node holds (train.scope, TF's resource containers): which exist, whether a
// session trains each, and whether a session's plan fits the variables a scope already holds.
// Plain logic, no CAF actors: the resource container asks it and carries out what it says.
#pragma once

#include "messages/shard_protocol.hpp"

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <map>
#include <string>
#include <vector>

namespace actorps {

/// Where a scope stands.
enum class scope_phase {
  in_session, ///< a chief set it up and has not stopped (or gone down) since
  kept,       ///< its session ended; the variables stay for the next session (node.keep-alive)
};

const char* to_string(scope_phase p);

/// Returns an empty string when a session with plan `wanted` may use the variables stored under
/// plan `held` (same variables and shapes, same parts on the same shards); else the first
/// difference, naming the variable and both shapes.
std::string plan_difference(const placement_plan& held, const placement_plan& wanted);

class scope_table {
public:
  /// What a setup does to its scope.
  enum class verdict {
    create, ///< a new scope: spawn its shard and initialise it
    attach, ///< the scope exists and fits: the session continues its variables
  };

  /// A session's setup for its plan's scope arrives at shard `shard`. A new scope is created (in
  /// session); an existing one is attached (in session again) when the plan fits and the
  /// session has the same workers and mode, and refused otherwise -- shape_mismatch naming the
  /// first difference of the plans, invalid_argument naming the workers or mode -- with the
  /// table unchanged.
  caf::expected<verdict> begin(const shard_setup& setup);

  /// The session of scope ended (its chief stopped or went down); a no-op for unknown scopes.
  void end(const std::string& scope);

  /// Returns why scope may not be dropped now: unknown_scope naming the held scopes, or
  /// invalid_argument while a session trains it; none for a kept scope.
  caf::error may_drop(const std::string& scope, uint32_t shard) const;

  /// Drops a kept scope; fails as may_drop says, leaving the table unchanged.
  caf::error drop(const std::string& scope, uint32_t shard);

  /// Removes a scope whatever its phase (its shard failed its setup or went down).
  void forget(const std::string& scope);

  bool holds(const std::string& scope) const { return scopes_.count(scope) > 0; }
  scope_phase phase(const std::string& scope) const { return scopes_.at(scope).phase; }
  const placement_plan& plan(const std::string& scope) const { return scopes_.at(scope).plan; }
  std::vector<std::string> names() const;

  /// Returns unknown_scope for `scope`, listing the scopes held.
  caf::error unknown(const std::string& scope, uint32_t shard) const;

  /// The answer to a pull or push for a scope not held: not_initialized while nothing is held (a
  /// restarted ps node the chief has not set up yet: workers wait and retry), else unknown().
  caf::error missing(const std::string& scope, uint32_t shard) const;

private:
  struct entry {
    placement_plan plan;
    uint32_t workers = 0;
    session_mode session;
    scope_phase phase = scope_phase::in_session;
  };
  std::map<std::string, entry> scopes_;
};

/// Renders a scope name for messages: "problem_1", or (none) for the empty scope.
std::string scope_label(const std::string& scope);

} // namespace actorps
