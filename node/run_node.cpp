// Role by role: what a node spawns, whom it connects to, and when it is done.
#include "node/run_node.hpp"

#include "train/run_log.hpp"

#include "train/model_report.hpp"

#include "actors/chief.hpp"
#include "actors/parameter_shard.hpp"
#include "actors/resource_container.hpp"
#include "control/scope_table.hpp"
#include "control/slicing.hpp"
#include "actors/worker_replica.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "node/connect.hpp"
#include "node/node_telemetry.hpp"
#include "node/multiplexer_call.hpp"
#include "node/stream_endpoints.hpp"
#include "node/sigterm_watch.hpp"

#include <caf/actor_system.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unistd.h>

namespace actorps {

namespace {

// Blocks until hdl terminates; returns its exit reason.
template <class Handle>
caf::error wait_for_exit(caf::actor_system& sys, const Handle& hdl) {
  caf::scoped_actor self{sys};
  self->monitor(hdl);
  caf::error reason;
  self->receive([&](caf::down_msg& msg) { reason = msg.reason; });
  return reason;
}

// Blocks until the published hdl terminates, then withdraws its publication: the middleman holds
// a reference to a published actor, and a detached actor's thread (so the actor system's
// shutdown) ends only when the last reference goes. Without it about 1 in 4 runs of 2 x 2
// model-parallel slices had a worker node that needed the exit watchdog; with it 3 of 85 runs.
template <class Handle>
caf::error serve_until_exit(caf::actor_system& sys, const Handle& hdl) {
  auto reason = wait_for_exit(sys, hdl);
  sys.middleman().unpublish(hdl);
  return reason;
}

std::string local_host_name() {
  char name[256] = {};
  return gethostname(name, sizeof(name) - 1) == 0 ? std::string{name} : std::string{"unknown host"};
}

int report_failure(const std::string& who, const caf::error& err) {
  std::fprintf(stderr, "error: %s: %s\n", who.c_str(), describe(err).c_str());
  return exit_code(err);
}

caf::expected<std::shared_ptr<const data_splits>> load_data(const train_settings& train, const std::string& who) {
  auto data = load_training_data(train, who);
  if (!data)
    return std::move(data.error());
  return std::make_shared<const data_splits>(std::move(*data));
}

// Prints the chief's outcome; returns the exit code.
int conclude(const chief_outcome& outcome, const train_settings& train, const caf::error& exit_reason) {
  if (auto why = outcome_failure(outcome, exit_reason); !why.empty()) {
    std::fprintf(stderr, "error: chief: %s\n", why.c_str());
    if (outcome.message.empty()) // (a run the chief failed logged its reason already)
      log_line("chief", why);
    return outcome.code == errc::invalid_config ? 2 : 1; // (a bad configuration exits 2)
  }
  auto& s = *outcome.summary;
  std::printf("mode=%s test_accuracy=%.4f best_validation_accuracy=%.4f examples_per_second=%.0f "
              "wall_seconds=%.1f steps=%lld epochs=%.2f summary=%s/%s/summary.json\n",
              s.mode.c_str(), s.test_accuracy, s.best_validation_accuracy, s.examples_per_second,
              s.wall_seconds, static_cast<long long>(s.steps), s.epochs, train.run_dir.c_str(),
              train.name.c_str());
  return 0;
}

// Spawns ps node i's resource container: it spawns a shard (with a SyncAggregator in front in
// sync and ssp sessions) for each scope a chief sets up.
resource_container_actor spawn_shard(caf::actor_system& sys, const cluster_settings& cluster, uint32_t i,
                                     std::shared_ptr<telemetry> observed, stream_listen streams = nullptr) {
  if (observed)
    observed->write_rates({{"actorps_shard_updates_total", "shard/updates_per_sec"},
                           {"actorps_shard_received_bytes_total", "shard/bytes_in_per_sec"},
                           {"actorps_shard_sent_bytes_total", "shard/bytes_out_per_sec"}},
                          "actorps_shard_version");
  return make_resource_container(sys, {i, cluster.startup_timeout, cluster.request_timeout, cluster.keep_alive,
                                       std::move(observed), std::move(streams), stream_limits_of(cluster)});
}

// Reaches a restarted peer at `at`, retrying for cluster.connect-timeout. For a moment after a
// loss CAF's middleman may still hand back its proxy of the lost process (same host:port; a
// request to it is never answered): a handle on the node last seen is not the restart, so it
// waits and asks again until another node answers -- or, given `answers` (and the `peer`'s name
// for the log), until the lost process itself answers again: it had stalled (frozen, suspended
// by a scheduler, swapped out) for longer than its peers' deadlines, and is back, not gone.
template <class Handle>
std::function<caf::expected<Handle>()> restart_connector(caf::actor_system& sys, const cluster_settings& cluster,
                                                         endpoint at, std::string who, std::string what,
                                                         caf::node_id lost,
                                                         std::function<bool(const Handle&)> answers = nullptr,
                                                         std::string peer = {}) {
  auto last = std::make_shared<caf::node_id>(std::move(lost));
  return [&sys, cluster, at, who, what, last, answers, peer]() -> caf::expected<Handle> {
    auto deadline = std::chrono::steady_clock::now() + cluster.connect_timeout;
    for (bool said = false;; said = true) {
      auto hdl = connect_to<Handle>(sys, at, who, what, cluster.connect_timeout, cluster.tls, false);
      if (!hdl || hdl->node() != *last) {
        if (hdl)
          *last = hdl->node();
        return hdl;
      }
      if (answers && answers(*hdl))
        return hdl;
      if (std::chrono::steady_clock::now() >= deadline)
        return caf::make_error(errc::peer_unreachable, cat(what, " at ", at.str(),
                                                           " still answered as the lost process at cluster.connect-timeout"));
      if (!said)
        log_line(who, answers ? cat(peer, "'s lost process does not answer (frozen, or gone with its connection still "
                                    "open); waiting for it to answer or for a new process")
                              : cat("the connection to the lost ", what, " is still open; waiting for the new process"));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  };
}

// Whether shard s's lost process answers again (a stats request within min(request-timeout, 2 s):
// any answer of the process, a refusal too; not CAF's own failure to deliver or to hear back),
// saying so.
bool shard_answers_again(caf::actor_system& sys, const cluster_settings& cluster, const std::string& who, uint32_t s,
                         const parameter_shard_actor& hdl) {
  caf::scoped_actor self{sys};
  bool answered = false;
  const auto within = std::min<std::chrono::milliseconds>(cluster.request_timeout, std::chrono::seconds(2));
  self->request(hdl, within, stats_atom_v)
    .receive([&](const shard_stats&) { answered = true; },
             [&](const caf::error& err) { answered = err.category() != caf::atom("system"); });
  if (answered)
    log_line(who, cat("shard ", s, " answers again as the same process (it had stalled, not restarted): going on with it"));
  return answered;
}

// Reaches restarted shard s at its cluster.ps address, or its lost process once it answers again
// (see restart_connector).
std::function<caf::expected<parameter_shard_actor>(uint32_t)>
shard_reconnector(caf::actor_system& sys, const cluster_settings& cluster, const std::string& who,
                  const std::vector<parameter_shard_actor>& shards) {
  auto each = std::make_shared<std::vector<std::function<caf::expected<parameter_shard_actor>()>>>();
  for (uint32_t s = 0; s < shards.size(); ++s)
    each->push_back(restart_connector<parameter_shard_actor>(
      sys, cluster, cluster.ps[s], who, cat("restarted shard ", s), shards[s].node(),
      [&sys, cluster, who, s](const parameter_shard_actor& hdl) { return shard_answers_again(sys, cluster, who, s, hdl); },
      cat("shard ", s)));
  return [each](uint32_t s) { return (*each)[s](); };
}

int run_ps(caf::actor_system& sys, const cluster_settings& cluster, node_telemetry& observers) {
  std::string who = cat("shard ", cluster.index);
  auto observed = observers.open("ps", cluster.index);
  if (!observed)
    return report_failure(who, observed.error());
  auto shard = spawn_shard(sys, cluster, cluster.index, *observed,
                           cluster.tensor_stream ? stream_port_at(sys, cluster, cluster.index) : nullptr);
  if (auto port = publish_at(sys, shard, cluster.ps[cluster.index], who, cluster.tls); !port) {
    caf::anon_send_exit(shard, caf::exit_reason::kill);
    return report_failure(who, port.error());
  }
  if (cluster.keep_alive)
    log_line(who, "node.keep-alive: the shard outlives its sessions (stop it with SIGTERM)");
  sigterm_watch leave_on_sigterm{[&sys, shard] { // (from a local actor: a leave from another node is ignored)
    caf::scoped_actor local{sys};
    local->send(shard, leave_atom_v);
  }};
  auto reason = serve_until_exit(sys, shard);
  return reason ? report_failure(who, reason) : 0;
}

// node.role = scopes: lists the scopes ps node.index holds, or drops node.drop-scope.
int run_scopes(caf::actor_system& sys, const cluster_settings& cluster) {
  std::string who = "scopes";
  auto ps = connect_to<resource_container_actor>(sys, cluster.ps[cluster.index], who, cat("shard ", cluster.index),
                                                 cluster.connect_timeout, cluster.tls);
  if (!ps)
    return report_failure(who, ps.error());
  caf::scoped_actor self{sys};
  auto print = [](const scope_info& x) {
    std::printf("%-24s %-10s %9u %12llu %10llu\n", scope_label(x.name).c_str(), x.phase.c_str(), x.variables,
                static_cast<unsigned long long>(x.bytes), static_cast<unsigned long long>(x.version));
  };
  int rc = 0;
  auto failed = [&](caf::error& err) { rc = report_failure(who, err); };
  std::printf("%-24s %-10s %9s %12s %10s\n", "scope", "phase", "variables", "bytes", "version");
  if (!cluster.drop_scope.empty())
    self->request(*ps, cluster.request_timeout, drop_atom_v, cluster.drop_scope)
      .receive([&](const scope_info& x) { print(x); std::printf("dropped %s\n", scope_label(x.name).c_str()); },
               failed);
  else
    self->request(*ps, cluster.request_timeout, scopes_atom_v)
      .receive([&](const std::vector<scope_info>& all) { for (auto& x : all) print(x); }, failed);
  return rc;
}

// With cluster.tensor-stream: worker `worker`'s links to the shards, standing in for their handles
// (without: the handles). A restarted shard is reached again the same way.
struct worker_shards {
  std::vector<parameter_shard_actor> handles;
  std::function<caf::expected<parameter_shard_actor>(uint32_t)> reconnect;
};

// Ends a worker's links (their streams close) once the worker is gone.
void stop_links(const worker_shards& linked);

caf::expected<worker_shards> link_shards(caf::actor_system& sys, const cluster_settings& cluster,
                                         const std::vector<parameter_shard_actor>& shards, uint32_t worker,
                                         const std::string& who) {
  auto reach = shard_reconnector(sys, cluster, who, shards);
  if (!cluster.tensor_stream)
    return worker_shards{shards, reach};
  worker_shards out;
  for (uint32_t s = 0; s < shards.size(); ++s) {
    auto link = open_shard_link(sys, cluster, shards[s], s, worker, who);
    if (!link)
      return std::move(link.error());
    out.handles.push_back(std::move(*link));
  }
  out.reconnect = [&sys, cluster, worker, who, reach](uint32_t s) -> caf::expected<parameter_shard_actor> {
    auto remote = reach(s);
    if (!remote)
      return remote;
    return open_shard_link(sys, cluster, *remote, s, worker, who);
  };
  return out;
}

void stop_links(const worker_shards& linked) {
  for (auto& h : linked.handles)
    if (h.node() == h.home_system().node()) // (links are local; plain handles are the shards')
      caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
}

// The chief's links to the shards for its evaluations' row reads (chief_config::row_links and
// relink_rows): each it opened, ended together when the chief is gone.
struct chief_links {
  chief_links(caf::actor_system& sys, const cluster_settings& cluster) : sys(sys), cluster(cluster) {}

  caf::actor_system& sys;
  cluster_settings cluster;
  std::mutex mtx; // (a restored shard's link opens in the chief's helper)
  std::vector<parameter_shard_actor> opened;

  caf::expected<parameter_shard_actor> open(uint32_t s, const parameter_shard_actor& shard) {
    auto link = open_shard_link(sys, cluster, shard, s, chief_worker_id, "chief");
    if (link) {
      std::lock_guard<std::mutex> guard{mtx};
      opened.push_back(*link);
    }
    return link;
  }

  // With cluster.tensor-stream and an embedding table: a link to each shard; none where one
  // cannot be opened (said in a line: the reads go through the shards' handles).
  std::vector<parameter_shard_actor> open_all(const train_settings& train, const std::vector<parameter_shard_actor>& shards) {
    const auto& layers = train.model.layers;
    if (!cluster.tensor_stream || layers.empty() || layers.front().kind != layer_kind::embedding)
      return {};
    std::vector<parameter_shard_actor> links;
    for (uint32_t s = 0; s < shards.size(); ++s) {
      auto link = open(s, shards[s]);
      if (!link) {
        log_line("chief", cat("evaluations read the table's rows through the shards' handles: ", describe(link.error())));
        stop_links(worker_shards{links, nullptr}); // (those opened: no reads go through them)
        return {};
      }
      links.push_back(std::move(*link));
    }
    return links;
  }

  void stop() {
    std::lock_guard<std::mutex> guard{mtx};
    stop_links(worker_shards{opened, nullptr});
  }
};

caf::expected<std::vector<parameter_shard_actor>> connect_shards(caf::actor_system& sys, const cluster_settings& cluster,
                                                                 const std::string& who) {
  std::vector<parameter_shard_actor> shards;
  for (size_t s = 0; s < cluster.ps.size(); ++s) {
    auto hdl = connect_to<parameter_shard_actor>(sys, cluster.ps[s], who, cat("shard ", s), cluster.connect_timeout,
                                                 cluster.tls);
    if (!hdl)
      return std::move(hdl.error());
    shards.push_back(std::move(*hdl));
  }
  return shards;
}

// The chief; with node.role = chief-worker (TF1's chief worker) worker 0 runs in the same
// process, on the same data, talking to the chief without the network.
int run_chief(caf::actor_system& sys, const train_settings& train, const cluster_settings& cluster,
              node_telemetry& observers) {
  const bool with_worker = cluster.role == node_role::chief_worker;
  const std::string who = with_worker ? "chief-worker" : "chief";
  if (auto err = run_log::check_free(train.run_dir, train.name)) // (a run in use: refused before anything else)
    return report_failure(who, err);
  auto observed = observers.open("chief", 0);
  if (!observed)
    return report_failure(who, observed.error());
  std::shared_ptr<telemetry> worker_observed;
  if (with_worker) {
    auto w = observers.open("worker", cluster.index);
    if (!w)
      return report_failure(who, w.error());
    worker_observed = *w;
  }
  auto data = load_data(train, who);
  if (!data)
    return report_failure(who, data.error());
  auto shards = connect_shards(sys, cluster, who);
  if (!shards)
    return report_failure(who, shards.error());
  auto outcome = std::make_shared<chief_outcome>();
  auto cfg = chief_config_for(train, cluster);
  cfg.data = *data;
  cfg.shards = *shards;
  auto links = std::make_shared<chief_links>(sys, cluster);
  cfg.row_links = links->open_all(train, *shards);
  if (!cfg.row_links.empty())
    cfg.relink_rows = [links](uint32_t s, parameter_shard_actor shard) { return links->open(s, shard); };
  cfg.outcome = outcome;
  cfg.reconnect_shard = shard_reconnector(sys, cluster, "chief", *shards);
  cfg.observed = *observed;
  auto chief = make_chief(sys, std::move(cfg));
  if (auto port = publish_at(sys, chief, cluster.chief, "chief", cluster.tls); !port) {
    caf::anon_send_exit(chief, caf::exit_reason::kill);
    return report_failure(who, port.error());
  }
  std::optional<worker_replica_actor> worker;
  std::optional<worker_shards> linked;
  if (with_worker) {
    auto got = link_shards(sys, cluster, *shards, cluster.index, "worker 0");
    if (!got) {
      caf::anon_send_exit(chief, caf::exit_reason::kill);
      return report_failure(who, got.error());
    }
    linked = std::move(*got);
    worker = make_worker_replica(sys, {cluster.index, train, cluster, *data, chief,
                                       linked->handles, cluster.workers[cluster.index].host, nullptr,
                                       linked->reconnect, worker_observed});
  }
  // SIGTERM ends the run as its limit would; the stop comes from a local actor (the chief
  // ignores one from another node)
  sigterm_watch end_on_sigterm{[&sys, chief] {
    caf::scoped_actor local{sys};
    local->send(chief, stop_atom_v);
  }};
  auto reason = serve_until_exit(sys, chief);
  if (worker) {
    wait_for_exit(sys, *worker); // it quits after the chief's stop
    stop_links(*linked);
  }
  links->stop();
  std::lock_guard<std::mutex> guard{outcome->mtx};
  return conclude(*outcome, train, reason);
}

// Model-parallel: the slices of a group exchange layer parts every step, so they talk over
// direct connections, not through the chief's node: each worker listens at its cluster.workers
// address and connects to the lower slices of its group (the higher ones connect to it).
caf::error link_slices(caf::actor_system& sys, const cluster_settings& cluster, const worker_replica_actor& worker,
                       const std::string& who) {
  if (auto port = publish_at(sys, worker, cluster.workers[cluster.index], who, cluster.tls); !port)
    return std::move(port.error());
  const uint32_t first = cluster.index - cluster.index % cluster.slices;
  for (uint32_t j = first; j < cluster.index; ++j)
    if (auto peer = connect_to<worker_replica_actor>(sys, cluster.workers[j], who, cat("worker ", j),
                                                     cluster.connect_timeout, cluster.tls);
        !peer)
      return std::move(peer.error());
  return caf::none;
}

// node.join: asks the running elastic job's chief for a worker id.
caf::expected<uint32_t> join_job(caf::actor_system& sys, const train_settings& train, const cluster_settings& cluster,
                                 const data_splits& data, const chief_actor& chief) {
  caf::scoped_actor self{sys};
  caf::expected<uint32_t> out{caf::error{}};
  self->request(chief, cluster.request_timeout, join_atom_v,
                worker_hello_for(train, cluster.placement, static_cast<uint32_t>(cluster.ps.size()), data, joining_worker,
                                 local_host_name()))
    .receive([&](const worker_welcome& welcome) { out = welcome.index; },
             [&](caf::error& err) { out = std::move(err); });
  return out;
}

int run_worker(caf::actor_system& sys, const train_settings& train, const cluster_settings& cluster,
               node_telemetry& observers) {
  const bool joining = cluster.elastic.join.has_value();
  std::string who = joining ? "joining worker" : cat("worker ", cluster.index);
  auto data = load_data(train, who);
  if (!data)
    return report_failure(who, data.error());
  auto chief = connect_to<chief_actor>(sys, cluster.chief, who, "chief", cluster.connect_timeout, cluster.tls);
  if (!chief)
    return report_failure(who, chief.error());
  auto shards = connect_shards(sys, cluster, who);
  if (!shards)
    return report_failure(who, shards.error());
  uint32_t index = cluster.index;
  if (joining) {
    auto id = join_job(sys, train, cluster, **data, *chief);
    if (!id)
      return report_failure(who, caf::make_error(errc::protocol_error,
                                                 cat("the chief at ", cluster.chief.str(), " refused the join: ",
                                                     describe(id.error()))));
    index = *id;
    who = cat("worker ", index);
    log_line(who, cat("joined the job at ", cluster.chief.str(), " as worker ", index));
  }
  auto reconnect = restart_connector<chief_actor>(sys, cluster, cluster.chief, who, "the restarted chief", chief->node());
  auto observed = observers.open("worker", index);
  if (!observed)
    return report_failure(who, observed.error());
  auto linked = link_shards(sys, cluster, *shards, index, who);
  if (!linked)
    return report_failure(who, linked.error());
  auto worker = make_worker_replica(sys, {index, train, cluster, *data, *chief,
                                          linked->handles, joining ? local_host_name() : cluster.workers[index].host,
                                          reconnect, linked->reconnect, *observed});
  if (cluster.model_parallel())
    if (auto err = link_slices(sys, cluster, worker, who)) {
      caf::anon_send_exit(worker, caf::exit_reason::kill);
      return report_failure(who, err);
    }
  sigterm_watch leave_on_sigterm{[worker] { caf::anon_send(worker, leave_atom_v); }};
  auto reason = cluster.model_parallel() ? serve_until_exit(sys, worker) : wait_for_exit(sys, worker);
  stop_links(*linked);
  return reason ? report_failure(who, reason) : 0;
}

int run_local(caf::actor_system& sys, const train_settings& train, const cluster_settings& cluster,
              node_telemetry& observers) {
  if (auto err = run_log::check_free(train.run_dir, train.name)) // (a run in use: refused before anything else)
    return report_failure("local", err);
  auto data = load_data(train, "local");
  if (!data)
    return report_failure("local", data.error());
  // (each actor has the telemetry of the node it stands for: runs/<name>/tensorboard/ps-0, ...)
  auto open = [&](const std::string& role, uint32_t index) {
    auto t = observers.open(role, index);
    if (!t)
      log_line("local", describe(t.error()));
    return t ? *t : std::shared_ptr<telemetry>{};
  };
  std::vector<parameter_shard_actor> shards;
  for (uint32_t s = 0; s < cluster.ps.size(); ++s)
    shards.push_back(spawn_shard(sys, cluster, s, open("ps", s)));
  auto outcome = std::make_shared<chief_outcome>();
  auto cfg = chief_config_for(train, cluster);
  cfg.data = *data;
  cfg.shards = shards;
  cfg.outcome = outcome;
  cfg.observed = open("chief", 0);
  auto chief = make_chief(sys, std::move(cfg));
  std::vector<worker_replica_actor> workers;
  for (uint32_t j = 0; j < cluster.workers.size(); ++j)
    workers.push_back(make_worker_replica(sys, {j, train, cluster, *data, chief, shards, "local",
                                                nullptr, nullptr, open("worker", j)}));
  auto reason = wait_for_exit(sys, chief);
  for (auto& w : workers)
    wait_for_exit(sys, w); // they quit after the chief's stop, or when they see it go down
  for (auto& s : shards)
    caf::anon_send_exit(s, caf::exit_reason::user_shutdown);
  std::lock_guard<std::mutex> guard{outcome->mtx};
  return conclude(*outcome, train, reason);
}

} // namespace

int run_node(caf::actor_system& sys, const train_settings& train, const cluster_settings& cluster) {
  if (cluster.role == node_role::scopes)
    return run_scopes(sys, cluster);
  auto observers = node_telemetry::start(train, cluster); // (a port that cannot be had: refused before anything else)
  if (!observers)
    return report_failure(to_string(cluster.role), observers.error());
  int rc = 1;
  switch (cluster.role) {
    case node_role::ps: rc = run_ps(sys, cluster, **observers); break;
    case node_role::chief:
    case node_role::chief_worker: rc = run_chief(sys, train, cluster, **observers); break;
    case node_role::worker: rc = run_worker(sys, train, cluster, **observers); break;
    case node_role::local: rc = run_local(sys, train, cluster, **observers); break;
    case node_role::scopes: rc = run_scopes(sys, cluster); break;
  }
  close_stream_handlers(sys); // (before the actor system ends: node/multiplexer_call.hpp)
  return rc;
}

} // namespace actorps
