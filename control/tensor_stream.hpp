// The tensor stream's protocol as a plain instance, no socket (node/tensor_stream_socket runs it
// on a connection): tensor frames, which carry only a tensor's bytes, and message frames, which
// carry the typed message (a pull, a push, their replies) that announces a transfer's tensors;
// and the receiver's ledger of announced transfers, which decides from a frame's 24-byte header
// alone where its bytes go (straight into the announced destination; a message's into a buffer
// of the owner's) or refuses the frame by name before anything is allocated or written. The
// socket's owner feeds it headers and completed payloads and carries out what it answers.
// Single-threaded.
#pragma once

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace actorps {

/// A frame's header on the wire: 24 bytes, little-endian: magic "APTS" (u32), version 1 (u16),
/// flags (u16: 0 a tensor frame, 1 a message frame), the transfer's id (u64), the tensor's index
/// in it (u32; a message frame: the message's kind, messages/stream_protocol.hpp's
/// stream_call), the payload's bytes (u32); the payload follows.
struct stream_frame_header {
  uint64_t transfer = 0;
  uint32_t index = 0;
  uint32_t bytes = 0;
  bool message = false;
};

/// The flags of a message frame.
constexpr uint16_t stream_message_flag = 1;

constexpr size_t stream_header_bytes = 24;

/// Writes h's 24 bytes into out.
void encode_stream_header(const stream_frame_header& h, uint8_t* out);

/// Reads a header from 24 bytes; protocol_error naming what is wrong (magic, version, flags).
caf::expected<stream_frame_header> decode_stream_header(const uint8_t* in);

/// One frame as the sender writes it: the header, then the tensor's bytes where they lie (a
/// scatter-gather pair for writev: no staging copy).
struct stream_frame {
  std::array<uint8_t, stream_header_bytes> header;
  const uint8_t* data;
  size_t bytes;
};

/// The frame of tensor `index` of `transfer`: bytes at data.
stream_frame make_stream_frame(uint64_t transfer, uint32_t index, const void* data, uint32_t bytes);

/// The message frame of `transfer`: a message of kind `call`, its bytes at data.
stream_frame make_message_frame(uint64_t transfer, uint32_t call, const void* data, uint32_t bytes);

/// One frame's payload as its sender holds it: bytes at data.
struct stream_piece {
  const void* data = nullptr;
  uint32_t bytes = 0;
};

/// Where an announced tensor's bytes go, and how many there are.
struct stream_slot {
  uint8_t* data = nullptr;
  uint32_t bytes = 0;
};

/// What a receiver does with a frame of a transfer not (yet) announced: refuse it, or hold it
/// (read no further) until the announcement comes -- a typed request on the other connection may
/// arrive after the frames it announces.
enum class unannounced_frames { refuse, hold };

/// What to do with a frame's payload: store it at slot, or hold the frame (read nothing more)
/// until its transfer is announced, then resume(), or (a message frame) read its slot.bytes
/// into a buffer of the reader's own (slot.data null), then on_message().
struct frame_fate {
  enum class kind { store, hold, message } what = kind::store;
  stream_slot slot;
};

/// A message frame whose payload arrived whole: its transfer and kind.
struct stream_message_header {
  uint64_t transfer = 0;
  uint32_t call = 0;
};

class stream_receiver {
public:
  /// peer: who the stream comes from (named in every error); max_pending_bytes: the most that
  /// announced, unfinished transfers may hold, and the most one message frame may carry.
  stream_receiver(std::string peer, size_t max_pending_bytes,
                  unannounced_frames unannounced = unannounced_frames::refuse);

  /// Registers transfer `id` (what its typed announcement said): the destinations of its tensors in
  /// frame order. Refuses an id already pending, an empty list, or more pending bytes than the cap.
  caf::error announce(uint64_t id, std::vector<stream_slot> slots);

  /// A frame's header arrived: returns where exactly its payload's bytes go (or, holding
  /// unannounced frames, that this one waits for its transfer's announcement), or refuses it
  /// (protocol_error: a garbled header, an unannounced transfer, an index outside it or already
  /// received, a size other than announced, a header where a payload was due, a message of no
  /// known kind or above the cap). A refusal changes nothing; the stream is then out of step and
  /// its connection should be closed. A message frame needs no announcement.
  caf::expected<frame_fate> on_header(const uint8_t* header);

  /// The transfer of the frame being held, if one is.
  std::optional<uint64_t> held() const;

  /// The transfer whose payload is being read, if one is.
  std::optional<uint64_t> reading() const {
    return phase_ == phase::reading_payload ? std::optional<uint64_t>{current_.transfer} : std::nullopt;
  }

  /// The held frame's transfer was announced: returns where its payload goes (checked as
  /// on_header checks), or refuses it. REQUIRES: held() names an announced transfer.
  caf::expected<stream_slot> resume();

  /// The payload of the frame on_header accepted arrived whole: returns the transfer's id when
  /// this completed it (it leaves the ledger), nullopt otherwise; protocol_error without one due.
  caf::expected<std::optional<uint64_t>> on_payload();

  /// The payload of the message frame on_header accepted arrived whole: its transfer and kind;
  /// protocol_error without one due.
  caf::expected<stream_message_header> on_message();

  /// The connection closed: an error naming what it cut short (a frame's payload, transfers still
  /// missing tensors), none if nothing was pending. The ledger is emptied.
  caf::error on_close();

  /// Forgets a pending transfer (its deadline passed) unless a payload of it is being read into
  /// its destination; returns whether it was forgotten.
  bool cancel(uint64_t id);

  /// Who the stream comes from.
  const std::string& peer() const { return peer_; }

  /// Transfers announced and not yet complete.
  size_t pending() const { return transfers_.size(); }

private:
  struct transfer {
    std::vector<stream_slot> slots;
    std::vector<bool> received;
    size_t missing = 0;
    size_t bytes = 0;
  };

  caf::error refuse(const std::string& what) const;
  caf::expected<stream_slot> place(const stream_frame_header& h);

  enum class phase { awaiting_header, holding, reading_payload, reading_message };

  std::string peer_;
  size_t cap_;
  unannounced_frames unannounced_;
  size_t pending_bytes_ = 0;
  std::map<uint64_t, transfer> transfers_;
  phase phase_ = phase::awaiting_header;
  stream_frame_header current_;
};

} // namespace actorps
