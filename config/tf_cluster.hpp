// A TensorFlow cluster layout -- jobs ps, worker and an optional chief, this task's job and
// index -- as TF1's node flags (config/tf1_flags) or TF_CONFIG (config/tf_config) give it, and
// the actorps options it stands for. Plain logic.
#pragma once

#include <caf/error.hpp>

#include <optional>
#include <string>
#include <vector>

namespace actorps {

/// Each part optional: TF1's flags may give only some of them (the rest from a config file).
struct tf_cluster {
  std::optional<std::string> job;                  ///< ps, worker or chief
  std::optional<long> index;                       ///< the task's index in its job
  std::optional<std::vector<std::string>> ps;      ///< host:port each
  std::optional<std::vector<std::string>> workers; ///< host:port each
  std::optional<std::string> chief;                ///< the chief task's host:port
};

/// A whole number of 1 to 9 digits ("12" -> 12); nullopt for anything else (a sign, a space).
std::optional<long> whole_number(const std::string& text);

/// Fails with invalid_config naming `what` (e.g. "--ps_hosts") and the entry that is not host:port.
caf::error check_hosts(const std::vector<std::string>& hosts, const std::string& what);

/// Fails with invalid_config when `args` set an option `options` set too:
/// "<source> and --cluster.ps both set cluster.ps: use one".
caf::error check_not_given(const std::vector<std::string>& args, const std::vector<std::string>& options,
                           const std::string& source);

/// The actorps options for `c`: node.role, node.index, cluster.ps, cluster.workers and
/// cluster.chief, for the parts given. Without a chief but with workers, as in TF1's
/// between-graph examples, worker 0 is the chief: cluster.chief is the first worker's address
/// and worker 0's role is chief-worker. REQUIRES: job is not chief unless chief is given.
std::vector<std::string> tf_cluster_options(const tf_cluster& c);

} // namespace actorps
