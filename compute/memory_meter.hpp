// What a backend has allocated: the bytes in use and the most in use at once (the peak that
// summary.json and the workers' reports carry). Counted by the backend's own thread.
#pragma once

#include <algorithm>
#include <cstddef>

namespace actorps {

/// A backend's memory, in bytes.
struct memory_use {
  size_t in_use = 0;   ///< held by live buffers
  size_t peak = 0;     ///< the most held at once since the backend was made
  size_t reserved = 0; ///< taken from the device up front (compute.gpu-memory = fraction:F); 0: as needed
};

class memory_meter {
public:
  void took(size_t bytes) {
    use_.in_use += bytes;
    use_.peak = std::max(use_.peak, use_.in_use);
  }
  void gave_back(size_t bytes) { use_.in_use -= std::min(bytes, use_.in_use); }
  void reserve(size_t bytes) { use_.reserved = bytes; }
  const memory_use& use() const { return use_; }

private:
  memory_use use_;
};

} // namespace actorps
