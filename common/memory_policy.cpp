#include "common/memory_policy.hpp"

#include <malloc.h>

namespace actorps {

void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 256 << 20); // chunks up to 256 MiB come from the heap
  mallopt(M_TRIM_THRESHOLD, 1 << 30);   // the heap's top is returned only beyond 1 GiB free
}

} // namespace actorps
