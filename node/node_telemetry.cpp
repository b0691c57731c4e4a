// The node's telemetries and its /metrics endpoint.
#include "node/node_telemetry.hpp"

#include "common/log.hpp"
#include "train/run_telemetry.hpp"

namespace actorps {

node_telemetry::node_telemetry(const train_settings& train, const cluster_settings& cluster) : train_(train) {
  const auto applied = shard_optimizer(train.optimizer, cluster); // (what the shards apply: async divides by the workers)
  described_ = {{"mode", to_string(cluster.mode)},
                {"workers", std::to_string(cluster.workers.size())},
                {"parameter shards", std::to_string(cluster.ps.size())},
                {"placement", cluster.placement},
                {"applied by the shards", cat(to_string(applied.kind), ", learning rate ", applied.learning_rate,
                                              applied.kind == optimizer_kind::momentum ? cat(", momentum ", applied.momentum) : "",
                                              applied.learning_rate != train.optimizer.learning_rate ? " (cluster.async-lr-scaling)" : "")}};
}

caf::expected<std::unique_ptr<node_telemetry>> node_telemetry::start(const train_settings& train,
                                                                      const cluster_settings& cluster) {
  std::unique_ptr<node_telemetry> out{new node_telemetry(train, cluster)};
  if (cluster.metrics_port == 0)
    return out;
  auto served = out->served_;
  auto server = metrics_server::start(cluster.metrics_address, cluster.metrics_port, [served] {
    std::lock_guard<std::mutex> guard{served->mtx};
    std::vector<const metric_registry*> all;
    for (auto& t : served->all)
      all.push_back(&t->metrics());
    return metric_registry::exposition_of(all);
  });
  if (!server)
    return std::move(server.error());
  out->server_ = std::move(*server);
  log_line("node", cat("serving Prometheus metrics at http://", cluster.metrics_address, ":", out->server_->port(),
                       "/metrics (read-only)"));
  return out;
}

caf::expected<std::shared_ptr<telemetry>> node_telemetry::open(const std::string& role, uint32_t index) {
  auto t = open_run_telemetry(train_, role, index, described_);
  if (!t)
    return t;
  std::lock_guard<std::mutex> guard{served_->mtx};
  served_->all.push_back(*t);
  return t;
}

} // namespace actorps
