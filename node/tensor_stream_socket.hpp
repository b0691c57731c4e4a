// One end of a tensor stream's connection inside CAF's middleman (a worker's ShardLink and a ps
// node's StreamSession each hold one): an event handler in the middleman's multiplexer that writes
// frames with sendmsg from the tensors where they lie (at once where the socket takes them), and reads each payload with recv straight
// into the destination its header was announced for (control/tensor_stream decides, and refuses
// a bad frame before a byte of it is stored). Every call may come from any thread: the work runs
// on the multiplexer's thread, and so do the callbacks.
#pragma once

#include "control/stream_connection.hpp"
#include "control/tensor_stream.hpp"
#include "node/stream_tls.hpp"

#include <caf/actor_system.hpp>
#include <caf/error.hpp>
#include <caf/io/network/event_handler.hpp>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace actorps {

/// What a tensor stream reports to its owner, on the multiplexer's thread.
struct stream_event {
  enum class kind { received, written, closed, message } what;
  uint64_t transfer = 0; ///< received: the transfer now complete; written, message: the frame's transfer
  uint32_t index = 0;    ///< written: the frame's index; message: its kind
  caf::error error;      ///< closed: why (none: the peer closed with nothing pending, or close())
  std::vector<char> payload{}; ///< message: its bytes
};

class tensor_stream_socket final : public caf::io::network::event_handler,
                                   public stream_connection,
                                   public std::enable_shared_from_this<tensor_stream_socket> {
public:
  using callback = std::function<void(stream_event)>;

  /// Takes over fd (a connected stream socket; closed with this) in sys's middleman.
  /// peer: named in errors; max_pending_bytes and unannounced: stream_receiver's (holding a
  /// frame, the socket reads nothing more until its transfer is announced); tls: a session on
  /// fd (frames flow once its handshake completed; a failed one closes the stream by name).
  static std::shared_ptr<tensor_stream_socket> start(caf::actor_system& sys, int fd, std::string peer,
                                                     size_t max_pending_bytes, callback on_event,
                                                     unannounced_frames unannounced = unannounced_frames::refuse,
                                                     std::unique_ptr<stream_tls> tls = nullptr);

  tensor_stream_socket(caf::io::network::default_multiplexer& mpx, int fd, std::string peer, size_t cap,
                       callback on_event, unannounced_frames unannounced, std::unique_ptr<stream_tls> tls);

  /// Announces an incoming transfer (see stream_receiver::announce); an error closes the stream.
  /// The destinations must stay valid until the transfer is received or the stream closed.
  void announce(uint64_t id, std::vector<stream_slot> slots) override;

  /// Queues a frame: tensor `index` of `transfer`, bytes at data, written where it lies; the
  /// written event says when data may change again.
  void send(uint64_t transfer, uint32_t index, const void* data, uint32_t bytes);

  /// Withdraws announced transfer `id` (stream_receiver::cancel); `keep` lives until then.
  void cancel(uint64_t id, std::shared_ptr<const void> keep) override;

  /// Queues the frames of a whole transfer (index i: pieces[i]) in one dispatch; `keep` holds
  /// their bytes alive until they are written or the stream closes.
  void send_all(uint64_t transfer, std::vector<stream_piece> pieces, std::shared_ptr<const void> keep) override;

  /// See stream_connection::send_call.
  void send_call(uint64_t transfer, uint32_t call, std::vector<char> message, std::vector<stream_piece> pieces,
                 std::shared_ptr<const void> keep) override;

  /// See stream_connection::send_call_borrowed.
  void send_call_borrowed(uint64_t transfer, uint32_t call, std::vector<char> message,
                          std::vector<stream_piece> pieces) override;

  /// See stream_connection::expire_held.
  void expire_held() override;

  /// Closes the connection (the closed event follows, without an error).
  void close() override;

  void handle_event(caf::io::network::operation op) override;
  void removed_from_loop(caf::io::network::operation op) override;
  void graceful_shutdown() override;

private:
  // A queued frame and what the written event names.
  struct outgoing {
    stream_frame frame;
    uint64_t transfer;
    uint32_t index;
    std::shared_ptr<const void> keep; // the bytes' owner, if the socket holds them
    bool borrowed = false;            // the bytes are the caller's for the call alone (send_call_borrowed)
  };

  // Queues a message frame of `transfer` and its tensors' frames (pieces borrowed or kept alive by keep).
  void queue_call(uint64_t transfer, uint32_t call, std::shared_ptr<std::vector<char>> message,
                  const std::vector<stream_piece>& pieces, std::shared_ptr<const void> keep, bool borrowed);
  // Copies what is still queued of borrowed frames into buffers of the socket's own.
  void own_borrowed();

  void watch_reads();
  void want_writes();
  void advance_handshake();
  ssize_t receive(uint8_t* into, size_t n); // > 0: bytes; 0: the peer closed; < 0: nothing now (or failed)
  ssize_t transmit();                       // bytes of the queue written; < 0: nothing now (or failed)
  void read_some();
  void write_some();
  void flush();
  void fail(caf::error err);
  void lost(const char* direction, const std::string& why); // the connection broke (peer_unreachable)

  // What the reader is reading: a header into header_, the payload into slot_, a message into
  // message_, or nothing (a held frame waits for its transfer's announcement).
  enum class reading { header, payload, message, held };

  static constexpr size_t max_write_pieces = 64; // iovecs one plain sendmsg gathers from the queue
  static constexpr size_t message_chunk = 64 * 1024; // a message's first allocation, doubled as its bytes come

  stream_receiver receiver_;
  std::unique_ptr<stream_tls> tls_;
  callback on_event_;
  reading reading_ = reading::header;
  uint64_t holds_ = 0;     // frames held so far (each hold a new number)
  uint64_t hold_seen_ = 0; // the hold expire_held() saw last (0: none)
  uint8_t header_[stream_header_bytes];
  size_t got_ = 0;
  stream_slot slot_;
  std::vector<char> message_; // a message frame's payload as it arrives (grown as its bytes come)
  uint32_t message_bytes_ = 0;
  std::deque<outgoing> out_;
  size_t sent_ = 0; // bytes of out_.front() written (header first)
  bool registered_write_ = false;
  bool open_ = true;
  std::atomic<bool> closing_{false}; // close() was called (it runs once)
  std::shared_ptr<tensor_stream_socket> self_; // keeps this alive while the loop holds it
};

} // namespace actorps
