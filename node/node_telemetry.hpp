// A node process's telemetry: one observe/telemetry per role it runs (a chief-worker has two, a
// local cluster one per actor), each with its event folder, and -- with node.metrics-port -- the
// /metrics endpoint that serves all of them. Lives as long as the node.
#pragma once

#include "config/cluster_options.hpp"
#include "config/train_options.hpp"
#include "observe/metrics_server.hpp"
#include "observe/telemetry.hpp"

#include <caf/expected.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace actorps {

class node_telemetry {
public:
  /// Starts the /metrics endpoint when cluster.metrics_port is set. Errors: invalid_config naming
  /// node.metrics-port and the address.
  static caf::expected<std::unique_ptr<node_telemetry>> start(const train_settings& train, const cluster_settings& cluster);

  /// The telemetry of one role of this node ("chief", "worker", "ps"), served from now on.
  /// Errors: file_error naming its event folder.
  caf::expected<std::shared_ptr<telemetry>> open(const std::string& role, uint32_t index);

  /// The port /metrics is served on (0: none).
  uint16_t port() const { return server_ ? server_->port() : 0; }

private:
  struct served {
    std::mutex mtx;
    std::vector<std::shared_ptr<telemetry>> all;
  };
  node_telemetry(const train_settings& train, const cluster_settings& cluster);
  train_settings train_;
  std::vector<std::pair<std::string, std::string>> described_; // the cluster's rows of the config text
  std::shared_ptr<served> served_ = std::make_shared<served>();
  std::unique_ptr<metrics_server> server_;
};

} // namespace actorps
