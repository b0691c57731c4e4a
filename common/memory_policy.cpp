#include "common/memory_policy.hpp"

#include <fstream>
#include <malloc.h>
#include <string>

namespace actorps {

void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 256 << 20); // chunks up to 256 MiB come from the heap
  mallopt(M_TRIM_THRESHOLD, 1 << 30);   // the heap's top is returned only beyond 1 GiB free
  mallopt(M_ARENA_MAX, 1);              // every thread allocates from that heap (see the header)
}

std::optional<uint64_t> available_memory() {
  std::ifstream in{"/proc/meminfo"};
  std::string line;
  const std::string key = "MemAvailable:";
  while (std::getline(in, line)) // ("MemAvailable:   12345678 kB")
    if (line.compare(0, key.size(), key) == 0)
      return std::stoull(line.substr(key.size())) * 1024;
  return std::nullopt;
}

} // namespace actorps
