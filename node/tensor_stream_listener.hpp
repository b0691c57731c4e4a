// The port a ps node's tensor streams arrive at: a listening socket in CAF's middleman
// multiplexer that accepts each connection (non-blocking) and hands its socket to the owner,
// on the multiplexer's thread. The owner makes a tensor_stream_socket of it. A TCP port, or a
// same-host local socket (node/local_stream_socket).
#pragma once

#include "control/stream_connection.hpp"

#include <caf/actor_system.hpp>
#include <caf/expected.hpp>
#include <caf/io/network/event_handler.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace actorps {

class tensor_stream_listener final : public caf::io::network::event_handler,
                                     public stream_port,
                                     public std::enable_shared_from_this<tensor_stream_listener> {
public:
  /// accepted(fd, peer): a new connection (fd is the owner's to close) from peer ("host:port").
  using accept_fn = std::function<void(int fd, std::string peer)>;

  /// Listens at host:port (port 0: one the system picks) in sys's middleman; an error
  /// (peer_unreachable) names the address.
  static caf::expected<std::shared_ptr<tensor_stream_listener>> start(caf::actor_system& sys, const std::string& host,
                                                                      uint16_t port, accept_fn accepted);

  /// Listens at a new local socket (same-host streams); its peers are named "this host (pid N)".
  static caf::expected<std::shared_ptr<tensor_stream_listener>> start_local(caf::actor_system& sys,
                                                                            accept_fn accepted);

  tensor_stream_listener(caf::io::network::default_multiplexer& mpx, int fd, uint16_t port, std::string local,
                         accept_fn accepted);

  /// The port it listens at (0: a local socket).
  uint16_t port() const override { return port_; }

  /// The local socket's name ("": a TCP port).
  std::string local_name() const override { return local_; }

  /// Stops listening (connections already accepted are their owners').
  void close() override;

  void handle_event(caf::io::network::operation op) override;
  void removed_from_loop(caf::io::network::operation op) override;
  void graceful_shutdown() override;

private:
  void stop();

  // Watches fd (listening) in sys's middleman.
  static std::shared_ptr<tensor_stream_listener> watch(caf::actor_system& sys, int fd, uint16_t port,
                                                       std::string local, accept_fn accepted);

  uint16_t port_;
  std::string local_;
  accept_fn accepted_;
  bool open_ = true;
  std::atomic<bool> closing_{false}; // close() was called (it runs once)
  std::shared_ptr<tensor_stream_listener> self_; // keeps this alive while the loop holds it
};

} // namespace actorps
