// Matrix views and owning buffers in a backend's memory (host RAM or device memory).
// No BLAS or CUDA types: a pointer here may be a device address; only its backend dereferences it.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

namespace actorps {

/// A non-owning row-major float matrix in one backend's memory.
struct matrix {
  float* data = nullptr;
  int rows = 0;
  int cols = 0;

  size_t size() const { return static_cast<size_t>(rows) * static_cast<size_t>(cols); }

  /// Returns rows [first, first + count) as a view. REQUIRES: 0 <= first, first + count <= rows.
  matrix row_range(int first, int count) const {
    return {data + static_cast<size_t>(first) * static_cast<size_t>(cols), count, cols};
  }
};

/// An owning float array allocated by a backend; frees itself with the backend's deleter.
/// A backend must outlive every buffer it allocated.
class buffer {
public:
  using deleter = std::function<void(float*)>;

  buffer() : ptr_(nullptr, [](float*) {}), size_(0) {}
  buffer(float* data, size_t size, deleter del) : ptr_(data, del), size_(size) {}

  float* data() const { return ptr_.get(); }
  size_t size() const { return size_; }

  /// Returns the first rows * cols elements as a matrix. REQUIRES: rows * cols <= size().
  matrix as_matrix(int rows, int cols) const { return {ptr_.get(), rows, cols}; }

private:
  std::unique_ptr<float, deleter> ptr_;
  size_t size_;
};

} // namespace actorps
