// Slices as a tensor-stream transfer (docs/protocol.md, "tensor stream"): the sender detaches the
// tensors of a typed request's or reply's slices (the message goes without values) and writes each
// as one frame from where it lies; the receiver checks the description before anything is
// allocated, hands the stream its destinations, and once the frames are in, puts the tensors back
// into the slices. fp32 dense tensors travel raw, into their final buffer; 16-bit and sparse ones
// travel in their typed-message encoding (messages/tensor.hpp) and are decoded. Plain logic.
#pragma once

#include "common/shared_heap.hpp"
#include "control/tensor_stream.hpp"
#include "messages/stream_protocol.hpp"

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace actorps {

/// The tensors of slices, taken out of them to travel as frames.
class outgoing_tensors {
public:
  /// Moves every slice's values out (the slices keep variable, offset, precision, sparse and
  /// delta) and describes them. Fails (invalid_argument) on a tensor above max_tensor_floats.
  static caf::expected<outgoing_tensors> detach(std::vector<variable_slice>& slices);

  outgoing_tensors() = default;

  /// The description the typed message carries, one per slice.
  const std::vector<stream_tensor>& tensors() const { return tensors_; }

  /// The frames, in slice order (index i: slice i; alive as long as this is).
  std::vector<stream_piece> pieces() const;

  /// Where every slice's tensor is dense (fp32, or 16-bit values already rounded to the
  /// precision the slice keeps), at most max_tensor_floats, and lies in `heap`: moves the values
  /// out and describes each as shared_fp32 (its offset in the heap; no frames: pieces() is
  /// empty). The receiver reads the floats where they lie, so they must stay as they are, this
  /// alive, until it answers. Otherwise (or with no slices) none, and the slices are unchanged
  /// (for detach()).
  static std::optional<outgoing_tensors> in_heap(std::vector<variable_slice>& slices, const shared_heap& heap);

  /// Payload bytes of every frame.
  uint64_t bytes() const;

private:
  std::vector<stream_tensor> tensors_;
  std::vector<tensor_buffer> raw_;               // raw_fp32 tensors (empty where encoded)
  std::vector<std::vector<char>> encoded_;    // encoded tensors (empty where raw)
};

/// The destinations of an announced transfer, then its tensors.
class incoming_tensors {
public:
  /// Checks the description against the message (`slices` tensors expected) and the cap on one
  /// transfer's bytes, then allocates the destinations. protocol_error naming `peer`: another
  /// count of tensors, an unknown encoding (or a shared one: no frame), a raw size that is not
  /// 4 x floats, a tensor above max_tensor_floats, or more bytes than the cap.
  static caf::expected<incoming_tensors> prepare(const std::vector<stream_tensor>& tensors, size_t slices,
                                                 uint64_t max_bytes, const std::string& peer);

  incoming_tensors() = default;

  /// Where the frames go, in frame order (for stream_receiver::announce).
  std::vector<stream_slot> slots();

  /// Where every destination is raw fp32 and lies in `heap` (prepared inside a
  /// shared_heap::scope): each described as shared_fp32 (its offset in the heap), for a peer
  /// that writes the tensors there instead of sending frames; else none.
  std::vector<stream_tensor> shared_in(const shared_heap& heap) const;

  /// Whether the transfer has no frames (nothing to announce or wait for).
  bool empty() const { return tensors_.empty(); }

  /// The frames are in: moves each tensor into its slice (decoding the encoded ones; a garbled
  /// encoding is a protocol_error naming the slice and `peer`). Raw values keep the precision
  /// their slice names: fp32 for frames, a 16-bit one for values a same-host ps node wrote into
  /// the shared heap already rounded to it.
  caf::error attach(std::vector<variable_slice>& slices, const std::string& peer);

private:
  std::vector<stream_tensor> tensors_;
  std::vector<float_vector> raw_;
  std::vector<std::vector<char>> encoded_;
};

/// How much a stream carries: the most one transfer may (a receiver refuses more), and the
/// least worth a stream at all (smaller transfers travel inside their typed message, as over
/// BASP: a frame costs a wake-up of the receiving node's network thread and its actor); and
/// whether a same-host worker's pushes may leave their gradients in its shared heap
/// (cluster.local-shared-memory: both ends must allow it).
struct stream_limits {
  uint64_t max_transfer_bytes = 0;
  uint64_t min_stream_bytes = 0;
  bool shared_memory = false;
};

/// Payload bytes of the frames described.
uint64_t frame_bytes(const std::vector<stream_tensor>& tensors);

/// Payload bytes of slices' tensors as frames (raw fp32: 4 per value; encoded: their wire size).
uint64_t stream_bytes(const std::vector<variable_slice>& slices);

/// The first frame of a stream (transfer 0, index 0): the token of the gateway's offer.
constexpr uint64_t stream_hello_transfer = 0;

} // namespace actorps
