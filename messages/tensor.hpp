// Tensors on the wire: a contiguous float buffer serialised as one raw copy (fp32), as 16-bit
// values (bf16, fp16) or sparse (indices and values of the non-zeros); the layout is in
// docs/protocol.md. CAF's default per-element encoding moves ~30 MiB/s; the raw copy ~450 MiB/s. The raw copy
// assumes every node has the same float byte order: worker_hello carries a probe value that the
// chief checks (see docs/protocol.md).
#pragma once

#include "common/errc.hpp"
#include "common/shared_heap.hpp"
#include "wire/precision.hpp"

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/deserializer.hpp>
#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/sec.hpp>
#include <caf/serializer.hpp>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace actorps {

/// An allocator whose resize() leaves new elements uninitialised: tensors are always filled
/// right after (a raw copy from the wire, a download), so the zeroing std::allocator does first
/// is wasted work (it was ~9% of a cluster's CPU time). Inside a shared_heap::scope, large
/// tensors come from the process's shared heap (common/shared_heap.hpp: a same-host ps node
/// reads them where they lie).
template <class T>
struct default_init_allocator : std::allocator<T> {
  using std::allocator<T>::allocator;
  template <class U>
  struct rebind {
    using other = default_init_allocator<U>;
  };
  T* allocate(size_t n) {
    if (void* p = shared_heap_allocate(n * sizeof(T)))
      return static_cast<T*>(p);
    return std::allocator<T>::allocate(n);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (!shared_heap_release(p))
      std::allocator<T>::deallocate(p, n);
  }
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

/// The floats of a tensor on the wire.
using float_vector = std::vector<float, default_init_allocator<float>>;

/// A copy of xs[0, n) rounded to precision p, in one pass (round_copy: fp32 a memmove; a
/// float_vector built from another, or from iterators, goes element by element through the
/// allocator's construct).
inline float_vector float_copy(const float* xs, size_t n, wire_precision p = wire_precision::fp32) {
  float_vector out(n);
  round_copy(p, xs, n, out.data());
  return out;
}

/// A float buffer that travels as raw bytes: fp32 as it is, or 16-bit values (bf16, fp16), and
/// dense or sparse (the indices and values of its non-zero entries). In memory it is always the
/// dense floats; a sender that picks a 16-bit precision rounds the values to it first
/// (round_to_precision), so a tensor means the same delivered locally or over the wire.
struct tensor_buffer {
  float_vector values{};
  wire_precision precision = wire_precision::fp32; ///< how the values travel
  bool sparse = false;                            ///< travel as (index, value) pairs of the non-zeros

  tensor_buffer() = default;
  tensor_buffer(float_vector xs) : values(std::move(xs)) {}
  tensor_buffer(const std::vector<float>& xs) : values(float_copy(xs.data(), xs.size())) {}
  tensor_buffer(std::initializer_list<float> xs) : values(xs) {}
  tensor_buffer(const tensor_buffer& other)
    : values(float_copy(other.values.data(), other.values.size())), precision(other.precision), sparse(other.sparse) {}
  tensor_buffer(tensor_buffer&&) noexcept = default;
  tensor_buffer& operator=(const tensor_buffer& other) {
    if (this != &other)
      *this = tensor_buffer{other};
    return *this;
  }
  tensor_buffer& operator=(tensor_buffer&&) noexcept = default;

  /// Returns a copy as a plain vector.
  std::vector<float> to_vector() const { return {values.begin(), values.end()}; }
};

/// A tensor holding a copy of xs[0, n), rounded to precision p and travelling in it.
inline tensor_buffer tensor_copy(const float* xs, size_t n, wire_precision p = wire_precision::fp32) {
  tensor_buffer out{float_copy(xs, n, p)};
  out.precision = p;
  return out;
}

/// Tensors are equal when their values are (the precision and sparsity say only how they travel).
inline bool operator==(const tensor_buffer& x, const tensor_buffer& y) {
  return x.values == y.values;
}

inline bool operator==(const tensor_buffer& x, const std::vector<float>& y) {
  return x.values.size() == y.size() && std::equal(y.begin(), y.end(), x.values.begin());
}

/// Most floats one tensor_buffer may carry (the wire's 32-bit size field allows 2 GiB per
/// message; senders split variables into slices well below this).
constexpr uint64_t max_tensor_floats = uint64_t{1} << 28; // 1 GiB

/// Non-zero entries of a tensor (what a sparse tensor sends).
inline size_t nonzero_count(const tensor_buffer& x) {
  return static_cast<size_t>(std::count_if(x.values.begin(), x.values.end(), [](float v) { return v != 0.0f; }));
}

/// Bytes of the tensor's payload on the wire: values (and indices, when sparse), without the
/// few bytes of its header. What the byte counters in metrics.jsonl add up.
inline uint64_t payload_bytes(const tensor_buffer& x) {
  const size_t width = bytes_per_value(x.precision);
  return x.sparse ? nonzero_count(x) * (sizeof(uint32_t) + width) : x.values.size() * width;
}

namespace detail {

/// The first byte of a tensor's encoding: bits 0-3 the precision, bit 4 sparse.
constexpr uint8_t sparse_bit = 0x10;

inline caf::error tensor_frame_error(std::string what) {
  return caf::make_error(errc::protocol_error, "tensor frame refused: " + what);
}

/// Refuses a frame that announces more bytes than the message holds, before allocating them.
inline caf::error check_available(caf::deserializer& f, uint64_t bytes) {
  if (auto* bin = dynamic_cast<caf::binary_deserializer*>(&f); bin != nullptr && bin->remaining() < bytes)
    return tensor_frame_error("announces " + std::to_string(bytes) + " bytes, the message has "
                              + std::to_string(bin->remaining()) + " left");
  return caf::none;
}

/// Scratch space for 16-bit conversions, reused per thread.
template <class T>
std::vector<T>& scratch(size_t n) {
  thread_local std::vector<T> buf;
  buf.resize(n);
  return buf;
}

/// Writes n values at the tensor's precision.
inline caf::error save_values(caf::serializer& f, wire_precision p, const float* xs, size_t n) {
  if (n == 0)
    return caf::none;
  if (p == wire_precision::fp32)
    return f.apply_raw(n * sizeof(float), const_cast<float*>(xs));
  if (auto* bin = dynamic_cast<caf::binary_serializer*>(&f)) // (one allocation for the blocks below)
    bin->buf().reserve(bin->buf().size() + n * sizeof(uint16_t));
  uint16_t block[2048]; // encoded a cache-resident block at a time, each appended as it is
  for (size_t i = 0; i < n; i += std::size(block)) {
    const size_t m = std::min(std::size(block), n - i);
    encode_halves(p, xs + i, m, block);
    if (auto err = f.apply_raw(m * sizeof(uint16_t), block))
      return err;
  }
  return caf::none;
}

/// Reads n values of precision p into out.
inline caf::error load_values(caf::deserializer& f, wire_precision p, float* out, size_t n) {
  if (n == 0)
    return caf::none;
  if (p == wire_precision::fp32)
    return f.apply_raw(n * sizeof(float), out);
  const size_t bytes = n * sizeof(uint16_t);
  if (auto* bin = dynamic_cast<caf::binary_deserializer*>(&f); bin != nullptr && bin->remaining() >= bytes) {
    decode_halves(p, bin->remainder().data(), n, out); // decoded straight from the message
    bin->skip(bytes);
    return caf::none;
  }
  auto& halves = scratch<uint16_t>(n);
  if (auto err = f.apply_raw(bytes, halves.data()))
    return err;
  decode_halves(p, halves.data(), n, out);
  return caf::none;
}

} // namespace detail

/// Saving: the encoding byte; dense: the element count, then the values as one raw block;
/// sparse: the dense size, the count of non-zeros, their indices (uint32) and their values.
inline caf::error inspect(caf::serializer& f, tensor_buffer& x) {
  uint8_t code = static_cast<uint8_t>(x.precision) | (x.sparse ? detail::sparse_bit : 0);
  if (auto err = f(code))
    return err;
  if (!x.sparse) {
    auto n = x.values.size();
    return caf::error::eval([&] { return f.begin_sequence(n); },
                            [&] { return detail::save_values(f, x.precision, x.values.data(), n); },
                            [&] { return f.end_sequence(); });
  }
  auto dense = static_cast<uint32_t>(x.values.size());
  auto& indices = detail::scratch<uint32_t>(0);
  auto& picked = detail::scratch<float>(0);
  for (uint32_t i = 0; i < dense; ++i)
    if (x.values[i] != 0.0f) {
      indices.push_back(i);
      picked.push_back(x.values[i]);
    }
  auto k = indices.size();
  return caf::error::eval([&] { return f(dense); }, [&] { return f.begin_sequence(k); },
                          [&] { return k > 0 ? f.apply_raw(k * sizeof(uint32_t), indices.data()) : caf::none; },
                          [&] { return detail::save_values(f, x.precision, picked.data(), k); },
                          [&] { return f.end_sequence(); });
}

/// Loading: refuses an unknown encoding, counts above max_tensor_floats or above what the
/// message holds, and sparse indices that are not increasing or fall outside the tensor, each
/// before allocating or storing anything; a sparse tensor arrives dense (zeros elsewhere).
inline caf::error inspect(caf::deserializer& f, tensor_buffer& x) {
  uint8_t code = 0;
  if (auto err = f(code))
    return err;
  const uint8_t p = code & 0x0f;
  if ((code & ~(detail::sparse_bit | 0x0f)) != 0 || p > static_cast<uint8_t>(wire_precision::fp16))
    return detail::tensor_frame_error("unknown encoding byte " + std::to_string(code));
  const auto precision = static_cast<wire_precision>(p);
  const size_t width = bytes_per_value(precision);
  x.precision = precision;
  x.sparse = (code & detail::sparse_bit) != 0;
  if (!x.sparse) {
    size_t n = 0;
    return caf::error::eval([&] { return f.begin_sequence(n); },
                            [&]() -> caf::error {
                              if (n > max_tensor_floats)
                                return detail::tensor_frame_error(std::to_string(n) + " values, more than "
                                                                  + std::to_string(max_tensor_floats));
                              if (auto err = detail::check_available(f, uint64_t{n} * width))
                                return err;
                              x.values.resize(n);
                              return detail::load_values(f, precision, x.values.data(), n);
                            },
                            [&] { return f.end_sequence(); });
  }
  uint32_t dense = 0;
  size_t k = 0;
  return caf::error::eval(
    [&] { return f(dense); }, [&] { return f.begin_sequence(k); },
    [&]() -> caf::error {
      if (dense > max_tensor_floats || k > dense)
        return detail::tensor_frame_error("sparse tensor of " + std::to_string(dense) + " values with "
                                          + std::to_string(k) + " entries");
      if (auto err = detail::check_available(f, uint64_t{k} * (sizeof(uint32_t) + width)))
        return err;
      auto& indices = detail::scratch<uint32_t>(k);
      if (k > 0)
        if (auto err = f.apply_raw(k * sizeof(uint32_t), indices.data()))
          return err;
      for (size_t i = 0; i < k; ++i)
        if (indices[i] >= dense || (i > 0 && indices[i] <= indices[i - 1]))
          return detail::tensor_frame_error("sparse index " + std::to_string(indices[i]) + " at entry "
                                            + std::to_string(i) + " is out of order or outside "
                                            + std::to_string(dense) + " values");
      auto& picked = detail::scratch<float>(k);
      if (auto err = detail::load_values(f, precision, picked.data(), k))
        return err;
      x.values.assign(dense, 0.0f);
      for (size_t i = 0; i < k; ++i)
        x.values[indices[i]] = picked[i];
      return caf::none;
    },
    [&] { return f.end_sequence(); });
}

/// Any other inspector (e.g. to_string) sees the plain vector.
template <class Inspector>
typename std::enable_if<!std::is_base_of<caf::serializer, Inspector>::value
                          && !std::is_base_of<caf::deserializer, Inspector>::value,
                        typename Inspector::result_type>::type
inspect(Inspector& f, tensor_buffer& x) {
  return f(caf::meta::type_name("tensor"), x.values);
}

} // namespace actorps
