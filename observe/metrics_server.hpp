// node.metrics-port: a read-only HTTP endpoint that answers GET /metrics with a registry's text
// exposition (Prometheus' format 0.0.4) and anything else with 404. One thread of its own; one
// request per connection; a peer that sends nothing for 5 s is dropped.
#pragma once

#include <caf/expected.hpp>

#include <atomic>
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
  metrics_server(int fd, uint16_t port, std::function<std::string()> body);
  void serve();
  void answer(int client);
  int fd_;
  uint16_t port_;
  std::function<std::string()> body_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

} // namespace actorps
