// actorps-node: one process of a cluster (chief, ps or worker), or the whole cluster in one
// process (node.role = local), configured from a CAF config file and the command line (where
// TF1's --job_name, --task_index, --ps_hosts, --worker_hosts and --chief_hosts work too).
#include "common/memory_policy.hpp"
#include "compute/blas_kernels.hpp"
#include "train/memory_need.hpp"
#include "common/errc.hpp"
#include "config/cluster_options.hpp"
#include "config/table_rules.hpp"
#include "config/slurm_cluster.hpp"
#include "config/tf1_flags.hpp"
#include "config/tf_config.hpp"
#include "config/train_options.hpp"
#include "model/mlp_spec.hpp"
#include "messages/register.hpp"
#include "node/basp_guard.hpp"
#include "node/caf_defaults.hpp"
#include "node/cpu_affinity.hpp"
#include "config/cpu_list.hpp"
#include "common/log.hpp"
#include "node/exit_watchdog.hpp"
#include "node/run_node.hpp"
#include "node/sigterm_watch.hpp"
#include "node/tls_files.hpp"

#include <caf/actor_system.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct node_config : actorps::strict_config {
  actorps::option_values train;
  actorps::cluster_values cluster;
  node_config() {
    load<caf::io::middleman>();
    actorps::set_node_caf_defaults(*this); // overridable by the file and the command line
    actorps::register_types(*this);
    actorps::declare_train_options(*this, train);
    actorps::declare_cluster_options(*this, cluster);
  }
};

int fail(const caf::error& err) {
  std::fprintf(stderr, "error: %s\n", actorps::describe(err).c_str());
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  actorps::reexec_with_better_blas(argv);
  actorps::keep_freed_memory();
  auto args = actorps::translate_tf1_flags(std::vector<std::string>(argv + 1, argv + argc));
  if (args) // --slurm: the cluster and this task from Slurm's environment (scripts/slurm/actorps.sbatch)
    args = actorps::translate_slurm(std::move(*args), [](const char* name) -> const char* { return std::getenv(name); });
  if (args) // (no role on the command line: the cluster manager's TF_CONFIG, when set, gives it)
    args = actorps::with_tf_config(std::move(*args), std::getenv("TF_CONFIG"));
  if (!args)
    return fail(args.error());
  std::vector<char*> translated{argv[0]};
  for (auto& arg : *args)
    translated.push_back(arg.data());
  translated.push_back(nullptr);
  node_config cfg;
  switch (cfg.parse_strict(static_cast<int>(translated.size()) - 1, translated.data())) {
    case actorps::strict_config::outcome::help_printed: return 0;
    case actorps::strict_config::outcome::failed: return 2;
    case actorps::strict_config::outcome::run: break;
  }
  auto train = actorps::validate(cfg.train);
  if (!train)
    return fail(train.error());
  auto cluster = actorps::validate(cfg.cluster);
  if (!cluster)
    return fail(cluster.error());
  if (auto err = actorps::check_optimizer(*cluster, train->optimizer))
    return fail(err);
  if (auto err = actorps::check_table_cluster(*cluster, *train))
    return fail(err);
  if (cluster->role != actorps::node_role::ps && cluster->role != actorps::node_role::scopes) // (the roles that train or evaluate)
    if (auto err = actorps::check_memory(actorps::estimate_memory(*train), actorps::available_memory()))
      return fail(err);
  if (cluster->model_parallel())
    if (auto dense = actorps::dense_stack(train->model); !dense)
      return fail(dense.error());
  if (auto err = actorps::validate_tls(cluster->tls, {cfg.openssl_certificate, cfg.openssl_key,
                                                      cfg.openssl_cafile, cfg.openssl_passphrase}))
    return fail(err);
  if (cluster->tls) {
    if (auto err = actorps::check_tls_files({cfg.openssl_certificate, cfg.openssl_key, cfg.openssl_cafile,
                                             cfg.openssl_passphrase}))
      return fail(err);
    cfg.load<caf::openssl::manager>();
  }
  if (cfg.cluster.check_only) {
    std::printf("configuration ok: %s node, mode %s\n", to_string(cluster->role), to_string(cluster->mode));
    return 0;
  }
  if (auto err = actorps::pin_to_cpus(cluster->cpus)) // (before any thread starts: they inherit it)
    return fail(err);
  if (!cluster->cpus.empty())
    actorps::log_line(actorps::cat(to_string(cluster->role), " ", cluster->index),
                      actorps::cat("runs on CPUs ", actorps::cpu_list_text(cluster->cpus), " (node.cpus)"));
  actorps::set_handshake_bound(cluster->max_handshake_bytes);
  if (cluster->role != actorps::node_role::local && cluster->role != actorps::node_role::scopes)
    actorps::catch_stop_signals(); // each role ends cleanly on SIGTERM or SIGINT (node/sigterm_watch.hpp)
  caf::actor_system sys{cfg};
  int code = actorps::run_node(sys, *train, *cluster);
  actorps::arm_exit_watchdog(code, std::chrono::seconds(5)); // bounds ~actor_system (see the header)
  return code;
}
