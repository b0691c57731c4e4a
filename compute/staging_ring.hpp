// The GPU backend's pinned host staging, as plain bookkeeping: a ring of `capacity` bytes of
// page-locked memory through which host data reaches the device (and back) on the backend's copy
// stream. Each piece written into the ring is a ticket; copies complete in ticket order (one copy
// stream), so a ticket done frees its piece and every older one. No memory or CUDA of its own:
// the CUDA backend maps offsets onto its cudaHostAlloc block and tickets onto events.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

namespace actorps {

class staging_ring {
public:
  /// A ring of `capacity` bytes handing out offsets that are multiples of `alignment` (> 0).
  explicit staging_ring(size_t capacity, size_t alignment = 256);

  /// What take() answers: `fits` (write at `offset`, then copy, and call it ticket `ticket`),
  /// or `wait` (ticket `ticket` must complete, done(ticket), before the ring has room).
  struct answer {
    enum class kind { fits, wait } what = kind::fits;
    size_t offset = 0;
    uint64_t ticket = 0;
  };

  /// Room for `bytes` (1 <= bytes <= chunk()), contiguous: at the write position, or at the
  /// ring's start when the end has too little. Pieces larger than chunk() go in several takes.
  answer take(size_t bytes);

  /// Tickets up to `ticket` completed: their pieces are free again.
  void done(uint64_t ticket);

  /// The most one take() may ask for: a quarter of the ring, so that a large copy goes in
  /// pieces, the next piece written while the one before it travels.
  size_t chunk() const { return capacity_ / 4; }
  size_t capacity() const { return capacity_; }
  /// Pieces written whose copies have not been reported done.
  size_t outstanding() const { return pieces_.size(); }
  /// The newest ticket handed out (0: none yet).
  uint64_t last_ticket() const { return next_ticket_ - 1; }

private:
  struct piece {
    size_t offset;
    size_t bytes; // (rounded up to the alignment)
    uint64_t ticket;
  };

  size_t capacity_;
  size_t alignment_;
  size_t head_ = 0; // where the next piece goes when it fits before the end
  uint64_t next_ticket_ = 1;
  std::deque<piece> pieces_; // outstanding, oldest first
};

} // namespace actorps
