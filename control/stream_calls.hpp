// The tensor stream's typed messages in band (docs/protocol.md, "tensor stream"): a pull, a
// push, their replies and a refusal as the payload of a message frame (CAF's binary format, as
// BASP writes them), and back; a payload that does not parse, or parses with bytes left over,
// is refused by name. Plain functions, no socket, no actor.
#pragma once

#include "control/stream_connection.hpp"
#include "control/stream_transfer.hpp"
#include "messages/stream_protocol.hpp"

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <memory>
#include <string>
#include <vector>

namespace actorps {

/// The message frame kind of each typed message.
constexpr stream_call call_of(const stream_pull*) { return stream_call::pull; }
constexpr stream_call call_of(const stream_push*) { return stream_call::push; }
constexpr stream_call call_of(const stream_pull_reply*) { return stream_call::pull_reply; }
constexpr stream_call call_of(const stream_push_reply*) { return stream_call::push_reply; }
constexpr stream_call call_of(const stream_refusal*) { return stream_call::refusal; }

/// The kind's name as errors say it ("pull", "push reply", ...; "message kind N" for none).
std::string call_name(uint32_t call);

/// x's bytes for a message frame (T: stream_pull, stream_push, stream_pull_reply,
/// stream_push_reply, stream_refusal); an error where it cannot be written or would not fit a
/// frame (4 GiB).
template <class T>
caf::expected<std::vector<char>> encode_call(const T& x);

/// The T a message frame from `peer` carries; protocol_error naming the peer and the transfer
/// when the bytes are not one.
template <class T>
caf::expected<T> decode_call(const std::vector<char>& bytes, const std::string& peer, uint64_t transfer);

/// Queues x as a message frame of `transfer` on conn, then `frames` behind it (none: the message
/// alone); the error where x cannot be encoded (nothing is queued).
template <class T>
caf::error send_call(stream_connection& conn, uint64_t transfer, const T& x,
                     std::shared_ptr<outgoing_tensors> frames = nullptr) {
  auto bytes = encode_call(x);
  if (!bytes)
    return std::move(bytes.error());
  const auto call = static_cast<uint32_t>(call_of(&x));
  if (!frames) {
    conn.send_call(transfer, call, std::move(*bytes));
  } else {
    auto pieces = frames->pieces();
    conn.send_call(transfer, call, std::move(*bytes), std::move(pieces), std::move(frames));
  }
  return caf::none;
}

/// Sends x as a message frame of `transfer` on conn, then its tensors' frames from `pieces`,
/// borrowed for the call alone (stream_connection::send_call_borrowed); the error where x cannot
/// be encoded (nothing is sent).
template <class T>
caf::error send_call_borrowed(stream_connection& conn, uint64_t transfer, const T& x, std::vector<stream_piece> pieces) {
  auto bytes = encode_call(x);
  if (!bytes)
    return std::move(bytes.error());
  conn.send_call_borrowed(transfer, static_cast<uint32_t>(call_of(&x)), std::move(*bytes), std::move(pieces));
  return caf::none;
}

/// An exchange's failure as a refusal on the wire: an actorps error's code and text, or CAF's
/// (a request to the container that timed out) by its code and text.
stream_refusal refusal_of(const caf::error& err);

/// The error a refusal stands for: the same code and category as the one refused with.
caf::error error_of(const stream_refusal& r);

} // namespace actorps
