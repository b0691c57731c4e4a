// Memory a same-host ps node reads and writes where it lies (cluster.local-shared-memory): a
// worker's gradients are downloaded into blocks of this process's shared heap, and the ps node,
// which maps the heap, applies them from there and writes the values a push asks back into the
// blocks the worker set aside for them, with no copy through the kernel. The heap
// is a memfd, sized once and sealed against shrinking and growing (so a reader's mapping can never
// fault), mapped read-write here; the reader opens it through /proc/<pid>/fd/<fd>, the pid being
// the one the kernel gave for the local socket's peer. A float_vector allocated inside a
// shared_heap::scope comes from the heap (messages/tensor.hpp's allocator asks it first).
#pragma once

#include <caf/expected.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace actorps {

class shared_heap {
public:
  /// Blocks start at multiples of this.
  static constexpr size_t alignment = 64;

  /// The process's heap, made of `bytes` (a virtual size: pages are backed as they are first
  /// written) on the first call; later calls return it. An error (out_of_memory) names the call
  /// that failed.
  static caf::expected<shared_heap*> of_process(size_t bytes);

  /// The process's heap, nullptr before of_process made one.
  static shared_heap* process();

  /// A block of at least `bytes` (block_size), nullptr where the heap has no room left. Released
  /// blocks are handed out again by size: a push's tensors (and the rows of a batch, whose
  /// counts change from step to step) find a block of their size class step after step.
  void* allocate(size_t bytes);

  /// The size of the block allocate(bytes) hands out: a multiple of `alignment`, and above
  /// 4 KiB one of eight sizes per doubling.
  static size_t block_size(size_t bytes);

  /// Returns a block of allocate(); false (nothing done) for memory that is not the heap's.
  bool release(const void* p);

  /// Whether [p, p + bytes) lies inside the heap.
  bool owns(const void* p, size_t bytes = 1) const;

  /// p's offset from the heap's start. REQUIRES: owns(p).
  uint64_t offset_of(const void* p) const;

  /// The memfd (a reader opens /proc/<this pid>/fd/<fd>) and its size.
  int fd() const { return fd_; }
  uint64_t bytes() const { return bytes_; }

  /// Bytes of blocks handed out and not released.
  size_t used() const;

  /// Inside a scope, on this thread, float_vector's allocations come from the process's heap
  /// while it has room (else, and without a heap, from the ordinary heap). A push's slices are
  /// allocated in one (a push names its tensors in the heap only where all of them lie there).
  class scope {
  public:
    scope();
    ~scope();
    scope(const scope&) = delete;
    scope& operator=(const scope&) = delete;

  private:
    bool outer_;
  };

  shared_heap(const shared_heap&) = delete;
  shared_heap& operator=(const shared_heap&) = delete;

private:
  shared_heap(int fd, uint8_t* base, uint64_t bytes) : fd_(fd), base_(base), bytes_(bytes) {}

  int fd_;
  uint8_t* base_;
  uint64_t bytes_;
  mutable std::mutex mtx_;
  uint64_t top_ = 0;                                  // the bump pointer
  std::map<size_t, std::vector<uint64_t>> free_;      // released blocks by size
  std::unordered_map<uint64_t, size_t> live_;         // blocks handed out: offset -> size
  size_t used_ = 0;
};

/// messages/tensor.hpp's allocator: `bytes` from the process's heap inside a shared_heap::scope
/// (nullptr: outside one, without a heap or room).
void* shared_heap_allocate(size_t bytes);

/// messages/tensor.hpp's allocator: releases p when it is the heap's; false otherwise.
bool shared_heap_release(const void* p) noexcept;

/// Another process's shared heap, mapped: the ps node reads a worker's gradients there and writes
/// the values a push asked back into the blocks the worker named for them.
class shared_view {
public:
  /// Opens /proc/<pid>/fd/<fd> and maps it; refuses (invalid_argument, naming the path) what is
  /// not a memfd sealed against shrinking and growing, of exactly `bytes`.
  static caf::expected<std::shared_ptr<const shared_view>> open(int pid, int fd, uint64_t bytes);

  ~shared_view();
  shared_view(const shared_view&) = delete;
  shared_view& operator=(const shared_view&) = delete;

  /// The `bytes` at offset `at`, as floats: nullptr where they do not lie inside the region or
  /// do not start on a float's boundary.
  float* floats_at(uint64_t at, uint64_t bytes) const;

  uint64_t bytes() const { return bytes_; }

private:
  shared_view(uint8_t* base, uint64_t bytes) : base_(base), bytes_(bytes) {}
  uint8_t* base_;
  uint64_t bytes_;
};

} // namespace actorps
