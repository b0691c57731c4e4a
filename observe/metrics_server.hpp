// node.metrics-port: a read-only HTTP endpoint that answers GET /metrics with a registry's text
// exposition (Prometheus' format 0.0.4) and anything else with 404. One thread of its own, which
// serves up to 32 connections at once without blocking on any; one request per connection, and
// each connection has 5 s for its whole exchange. The stop never waits for a client.
#pragma once

#include <caf/expected.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace actorps {

class metrics_server {
public:
  /// Listens at address:port (port 0: one the kernel picks) and serves `body`'s text. Errors:
  /// invalid_config naming node.metrics-port and the address when it cannot listen there.
  static caf::expected<std::unique_ptr<metrics_server>> start(const std::string& address, uint16_t port,
                                                               std::function<std::string()> body);
  ~metrics_server();

  uint16_t port() const { return port_; }

private:
  /// Clients served at once; each has client_deadline from its connect for its whole exchange
  /// (request in, answer out), then it is closed.
  static constexpr size_t max_clients = 32;
  static constexpr std::chrono::seconds client_deadline{5};

  metrics_server(int fd, uint16_t port, std::function<std::string()> body);
  void serve();
  std::string answer_to(const std::string& request);
  int fd_;
  uint16_t port_;
  std::function<std::string()> body_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

} // namespace actorps
