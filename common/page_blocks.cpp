#include "common/page_blocks.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace actorps {

namespace {

constexpr size_t huge_page = size_t{2} << 20;

size_t mapped_bytes(size_t bytes) {
  return (bytes + huge_page - 1) / huge_page * huge_page;
}

} // namespace

void* allocate_block(size_t bytes) {
  if (bytes < page_block_bytes) {
    const size_t size = std::max<size_t>(64, (bytes + 63) / 64 * 64);
    void* p = std::aligned_alloc(64, size);
    if (p != nullptr)
      std::memset(p, 0, size);
    return p;
  }
  // Maps one huge page more than needed and returns the 2 MiB-aligned blocks inside (the kernel
  // can back only aligned 2 MiB ranges with a huge page), before anything touches them.
  const size_t size = mapped_bytes(bytes);
  void* raw = mmap(nullptr, size + huge_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED)
    return nullptr;
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + huge_page - 1) / huge_page * huge_page;
  if (aligned > start)
    munmap(raw, aligned - start);
  if (const uintptr_t end = aligned + size, mapped_end = start + size + huge_page; mapped_end > end)
    munmap(reinterpret_cast<void*>(end), mapped_end - end);
  madvise(reinterpret_cast<void*>(aligned), size, MADV_HUGEPAGE); // (a hint: where refused, plain pages)
  return reinterpret_cast<void*>(aligned);
}

void free_block(void* p, size_t bytes) noexcept {
  if (p == nullptr)
    return;
  if (bytes < page_block_bytes)
    std::free(p);
  else
    munmap(p, mapped_bytes(bytes));
}

} // namespace actorps
