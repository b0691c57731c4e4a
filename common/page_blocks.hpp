// Large blocks straight from the kernel, on 2 MiB pages where it gives them: an embedding table
// (on a ps node, in one training process) is read and written at scattered rows, one TLB miss
// per row on 4 KiB pages. On 2 cores of an AVX-512 Xeon an Adagrad update of 4,400 rows of 32 in
// a 2 x 128 MiB table took 0.50 ms on 4 KiB pages and 0.28 ms on 2 MiB pages (rows fetched ahead
// in both). The kernel decides (transparent huge pages: "always" or "madvise" in
// /sys/kernel/mm/transparent_hugepage/enabled); where it does not, these are plain pages.
#pragma once

#include <cstddef>
#include <new>

namespace actorps {

/// Blocks from this size on are mapped on their own and marked for 2 MiB pages; smaller ones come
/// from the heap.
constexpr size_t page_block_bytes = size_t{8} << 20;

/// Returns `bytes` of zeroed memory aligned to 64 bytes (to 2 MiB from page_block_bytes on),
/// nullptr where there is none.
void* allocate_block(size_t bytes);

/// Returns a block of allocate_block(bytes) (the same bytes).
void free_block(void* p, size_t bytes) noexcept;

/// A std::allocator for the large float arrays of a shard's store: allocate_block's memory.
template <class T>
struct block_allocator {
  using value_type = T;
  block_allocator() = default;
  template <class U>
  block_allocator(const block_allocator<U>&) noexcept {}
  T* allocate(size_t n) {
    if (auto* p = allocate_block(n * sizeof(T)))
      return static_cast<T*>(p);
    throw std::bad_alloc();
  }
  void deallocate(T* p, size_t n) noexcept { free_block(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const block_allocator<U>&) const noexcept { return true; }
  template <class U>
  bool operator!=(const block_allocator<U>&) const noexcept { return false; }
};

} // namespace actorps
