// The typed half of the tensor stream (docs/protocol.md, "tensor stream"): a worker's link asks
// a ps node's gateway for a stream (over BASP), then sends its pulls and pushes as these
// messages in band, each a message frame on the stream ahead of its tensors (control/
// stream_calls encodes them); their slices carry no values where the tensors travel as the
// stream's frames, one per slice, described here (their encoding and size) so the receiver can
// place every byte before it reads it.
#pragma once

#include "messages/equality.hpp"
#include "messages/shard_protocol.hpp"

#include <caf/actor.hpp>
#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <vector>

namespace actorps {

/// How one tensor travels: as a frame, raw fp32 values (read straight into the tensor) or the
/// tensor's typed-message encoding (16-bit values, sparse pairs: read into a buffer, decoded);
/// or, shared (on the local socket, cluster.local-shared-memory: a push's gradients, and the
/// values its reply wrote where the push asked), not at all: fp32 values in the worker's shared
/// heap, which the ps node maps, reading or writing them in place.
enum class stream_encoding : uint8_t { raw_fp32 = 0, encoded = 1, shared_fp32 = 2 };

/// One frame of a transfer: the tensor of the slice at the same position.
struct stream_tensor {
  stream_encoding encoding = stream_encoding::raw_fp32;
  uint32_t floats = 0; ///< raw_fp32, shared_fp32: the values (raw: bytes = 4 * floats); encoded: 0
  uint32_t bytes = 0;  ///< the frame's payload (shared_fp32: 0, no frame)
  uint64_t at = 0;     ///< shared_fp32: the values' offset in the sender's shared heap
};

/// Link -> ps node (its container, which hands it to its gateway): (stream_atom, uint32_t worker)
/// -> stream_offer: the stream's port on the ps node's host, the token its first frame must
/// carry (transfer 0, index 0, 8 bytes), the session (on the ps node) that serves it, and the
/// ps node's same-host local socket ("": none; cluster.local-streams), which a worker on the
/// same host connects to instead of the port, and whether that socket speaks TLS
/// (security.local-streams-tls; the port speaks it whenever security.tls is on).
struct stream_offer {
  uint16_t port = 0;
  uint64_t token = 0;
  caf::actor session{};
  std::string local;
  bool local_tls = false;
};

/// Link -> session: (stream_atom, uint64_t token) -> bool: true once the stream carrying the
/// token arrived (the answer waits for it).

/// Link -> session, once its stream is attached over the local socket (cluster.local-shared-
/// memory): (stream_atom, shared_heap_offer) -> bool: whether the session mapped the worker
/// process's shared heap (common/shared_heap.hpp), memfd `fd` of `bytes`, opened through
/// /proc/<the local socket peer's pid>/fd/<fd>. From a true on, the link's pushes may name
/// shared_fp32 tensors and set their replies' destinations aside there (stream_push::reply_to);
/// false (a reason logged on the ps node) keeps both as frames.
struct shared_heap_offer {
  uint64_t token = 0; ///< the stream's
  int32_t fd = -1;
  uint64_t bytes = 0;
};

/// The kinds of message frame (the header's index field): link -> session a pull or a push, then
/// session -> link the same transfer's reply or refusal.
enum class stream_call : uint32_t { pull = 1, push = 2, pull_reply = 3, push_reply = 4, refusal = 5 };
constexpr uint32_t stream_first_call = 1;
constexpr uint32_t stream_last_call = 5;

/// Link -> session, a message frame of kind push: stream_push; answered by a push_reply
/// (stream_push_reply) or a refusal (stream_refusal). The request's gradients are frames of
/// transfer `transfer` on the stream of `link`, in the order of request.grads.
struct stream_push {
  uint64_t link = 0;
  uint64_t transfer = 0;
  push_request request{}; ///< grads without values
  std::vector<stream_tensor> tensors{};
  /// Not 0: the link will use this id for a later push whose tensors are described exactly so
  /// (a step's parts repeat every step); the session may announce its destinations now, so
  /// those frames are read as they arrive. A session that does not keeps the rule: frames ahead
  /// of their push wait for it.
  uint64_t next_transfer = 0;
  /// Not empty (a link whose shared heap the session mapped): where in the worker's shared heap
  /// the session may write the values the push asks back, one shared_fp32 tensor per value slice
  /// of the reply in its order; a reply written there names them again and has no frames.
  std::vector<stream_tensor> reply_to{};
};

/// The reply's values are frames of transfer `transfer` (the request's id) the other way.
struct stream_push_reply {
  push_reply reply{}; ///< values without values
  std::vector<stream_tensor> tensors{};
};

/// Link -> session, a message frame of kind pull: stream_pull; answered by a pull_reply
/// (stream_pull_reply) or a refusal.
struct stream_pull {
  uint64_t link = 0;
  uint64_t transfer = 0;
  pull_request request{};
  /// As stream_push::reply_to: where in the worker's shared heap the session may write the
  /// values pulled, one shared_fp32 tensor per slice of the reply in its order.
  std::vector<stream_tensor> reply_to{};
};

struct stream_pull_reply {
  pull_reply reply{}; ///< slices without values
  std::vector<stream_tensor> tensors{};
};

/// Session -> link, a message frame of kind refusal: the exchange failed (an actorps error:
/// its code and text; else, `actorps` false, CAF's, by its text).
struct stream_refusal {
  bool actorps = true;
  uint8_t code = 0;
  std::string text{};
};

/// A stream's socket -> its owner, on the same node: (stream_atom, stream_note).
struct stream_note {
  /// received, closed: from the stream; accepted: a connection arrived (to the gateway), or the
  /// gateway hands it to its session; expired: to the gateway itself, a connection's deadline
  /// for its first frame passed; message: a message frame arrived whole.
  enum class kind : uint8_t { received = 0, closed = 1, accepted = 2, expired = 3, message = 4 };
  kind what = kind::received;
  uint64_t link = 0;     ///< the stream (the owner's number for it)
  uint64_t transfer = 0; ///< received: the transfer now complete; message: its transfer
  caf::error error{};    ///< closed: why (none: closed in order)
  uint32_t call = 0;           ///< message: its kind (stream_call)
  std::vector<char> payload{}; ///< message: its bytes

  static stream_note received_transfer(uint64_t transfer) { return stream_note{kind::received, 0, transfer, caf::none}; }
  static stream_note closed_by(caf::error why) { return stream_note{kind::closed, 0, 0, std::move(why)}; }
  static stream_note accepted_link(uint64_t link) { return stream_note{kind::accepted, link, 0, caf::none}; }
  static stream_note expired_link(uint64_t link) { return stream_note{kind::expired, link, 0, caf::none}; }
  static stream_note message_of(uint64_t transfer, uint32_t call, std::vector<char> payload) {
    return stream_note{kind::message, 0, transfer, caf::none, call, std::move(payload)};
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, stream_tensor& x) {
  return f(caf::meta::type_name("stream_tensor"), x.encoding, x.floats, x.bytes, x.at);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, shared_heap_offer& x) {
  return f(caf::meta::type_name("shared_heap_offer"), x.token, x.fd, x.bytes);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, stream_offer& x) {
  return f(caf::meta::type_name("stream_offer"), x.port, x.token, x.session, x.local, x.local_tls);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, stream_push& x) {
  return f(caf::meta::type_name("stream_push"), x.link, x.transfer, x.request, x.tensors, x.next_transfer, x.reply_to);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, stream_push_reply& x) {
  return f(caf::meta::type_name("stream_push_reply"), x.reply, x.tensors);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, stream_pull& x) {
  return f(caf::meta::type_name("stream_pull"), x.link, x.transfer, x.request, x.reply_to);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, stream_pull_reply& x) {
  return f(caf::meta::type_name("stream_pull_reply"), x.reply, x.tensors);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, stream_refusal& x) {
  return f(caf::meta::type_name("stream_refusal"), x.actorps, x.code, x.text);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, stream_note& x) {
  return f(caf::meta::type_name("stream_note"), x.what, x.link, x.transfer, x.error, x.call, x.payload);
}

ACTORPS_FIELDWISE_EQ(stream_tensor, v.encoding, v.floats, v.bytes, v.at)
ACTORPS_FIELDWISE_EQ(shared_heap_offer, v.token, v.fd, v.bytes)
ACTORPS_FIELDWISE_EQ(stream_push, v.link, v.transfer, v.request, v.tensors, v.next_transfer, v.reply_to)
ACTORPS_FIELDWISE_EQ(stream_push_reply, v.reply, v.tensors)
ACTORPS_FIELDWISE_EQ(stream_pull, v.link, v.transfer, v.request, v.reply_to)
ACTORPS_FIELDWISE_EQ(stream_pull_reply, v.reply, v.tensors)
ACTORPS_FIELDWISE_EQ(stream_refusal, v.actorps, v.code, v.text)

} // namespace actorps
