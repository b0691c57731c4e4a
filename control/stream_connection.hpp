// What the shard link and the stream gateway (actors/) see of a tensor stream's connection and
// of the port streams arrive at: the node's sockets (node/tensor_stream_socket,
// node/tensor_stream_listener) implement these, so the actors hold no socket code.
#pragma once

#include "control/tensor_stream.hpp"
#include "messages/stream_protocol.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace actorps {

/// One connection of a tensor stream. Every call may come from any thread.
class stream_connection {
public:
  virtual ~stream_connection() = default;

  /// Announces an incoming transfer (see stream_receiver::announce); an error closes the stream.
  /// The destinations must stay valid until the transfer is received or the stream closed.
  virtual void announce(uint64_t id, std::vector<stream_slot> slots) = 0;

  /// As send_call, with the tensors' bytes borrowed: valid during this call alone (a shard's
  /// values in its store, read under its lock). On the connection's network thread what the
  /// socket takes at once is written from where they lie and the rest is copied before the call
  /// returns; elsewhere every piece is copied first.
  virtual void send_call_borrowed(uint64_t transfer, uint32_t call, std::vector<char> message,
                                  std::vector<stream_piece> pieces) = 0;

  /// Withdraws an announced transfer whose frames will not come (its request was refused);
  /// `keep` holds its destinations until the stream has let go of them.
  virtual void cancel(uint64_t id, std::shared_ptr<const void> keep) = 0;

  /// Queues the frames of a whole transfer (index i: pieces[i]); `keep` holds their bytes alive
  /// until they are written or the stream closes.
  virtual void send_all(uint64_t transfer, std::vector<stream_piece> pieces, std::shared_ptr<const void> keep) = 0;

  /// Queues a message frame of `transfer` (kind `call`, bytes `message`), then the frames of
  /// its tensors (index i: pieces[i], none for a message alone), in one go.
  virtual void send_call(uint64_t transfer, uint32_t call, std::vector<char> message,
                         std::vector<stream_piece> pieces = {}, std::shared_ptr<const void> keep = nullptr) = 0;

  /// Closes the stream, by name, when the frame it holds for an unannounced transfer is the same
  /// one it held at the previous call: the owner calls it every interval (cluster.request-timeout),
  /// so a frame whose announcement never comes waits one to two intervals, not for ever.
  virtual void expire_held() = 0;

  /// Closes the connection (a closed note without an error follows).
  virtual void close() = 0;
};

/// How a connection tells its owner what happened (received, a message, closed), on the
/// network's thread.
using stream_notify = std::function<void(stream_note)>;

/// Makes the stream of a connected socket, reporting to notify (nullptr: it could not: the
/// socket is closed and the reason was logged).
using stream_opener = std::function<std::shared_ptr<stream_connection>(stream_notify)>;

/// A listening port for streams.
class stream_port {
public:
  virtual ~stream_port() = default;
  virtual uint16_t port() const = 0;
  /// The same-host local socket it also listens at ("": none; node/local_stream_socket).
  virtual std::string local_name() const { return {}; }
  /// Whether the local socket's streams are TLS (security.local-streams-tls).
  virtual bool local_tls() const { return false; }
  /// Stops listening.
  virtual void close() = 0;
};

/// accepted(open, peer, pid): a connection arrived from peer ("host:port", or "this host (pid N)"
/// on the local socket, pid N: the peer's process as the kernel names it; 0 over TCP); open()
/// makes its stream.
using stream_accept = std::function<void(stream_opener open, std::string peer, int pid)>;

/// Starts listening, handing every connection to accepted.
using stream_listen = std::function<caf::expected<std::shared_ptr<stream_port>>(stream_accept accepted)>;

} // namespace actorps
