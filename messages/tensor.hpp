// Tensors on the wire: a contiguous float buffer serialised as one raw copy.
// CAF's default per-element encoding moves ~30 MiB/s; the raw copy ~450 MiB/s. The raw copy
// assumes every node has the same float byte order: worker_hello carries a probe value that the
// chief checks (see docs/protocol.md).
#pragma once

#include <caf/deserializer.hpp>
#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/sec.hpp>
#include <caf/serializer.hpp>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

namespace actorps {

/// An allocator whose resize() leaves new elements uninitialised: tensors are always filled
/// right after (a raw copy from the wire, a download), so the zeroing std::allocator does first
/// is wasted work (it was ~9% of a cluster's CPU time).
template <class T>
struct default_init_allocator : std::allocator<T> {
  using std::allocator<T>::allocator;
  template <class U>
  struct rebind {
    using other = default_init_allocator<U>;
  };
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

/// A float buffer that travels as raw bytes.
struct tensor_buffer {
  float_vector values;

  tensor_buffer() = default;
  tensor_buffer(float_vector xs) : values(std::move(xs)) {}
  tensor_buffer(const std::vector<float>& xs) : values(xs.begin(), xs.end()) {}
  tensor_buffer(std::initializer_list<float> xs) : values(xs) {}

  /// Returns a copy as a plain vector.
  std::vector<float> to_vector() const { return {values.begin(), values.end()}; }
};

inline bool operator==(const tensor_buffer& x, const tensor_buffer& y) {
  return x.values == y.values;
}

inline bool operator==(const tensor_buffer& x, const std::vector<float>& y) {
  return x.values.size() == y.size() && std::equal(y.begin(), y.end(), x.values.begin());
}

/// Most floats one tensor_buffer may carry (the wire's 32-bit size field allows 2 GiB per
/// message; senders split variables into slices well below this).
constexpr uint64_t max_tensor_floats = uint64_t{1} << 28; // 1 GiB

/// Saving: element count, then the floats as one raw block.
inline caf::error inspect(caf::serializer& f, tensor_buffer& x) {
  auto n = x.values.size();
  return caf::error::eval([&] { return f.begin_sequence(n); },
                          [&] { return n > 0 ? f.apply_raw(n * sizeof(float), x.values.data()) : caf::none; },
                          [&] { return f.end_sequence(); });
}

/// Loading: refuses counts above max_tensor_floats before allocating.
inline caf::error inspect(caf::deserializer& f, tensor_buffer& x) {
  size_t n = 0;
  return caf::error::eval([&] { return f.begin_sequence(n); },
                          [&]() -> caf::error {
                            if (n > max_tensor_floats)
                              return caf::sec::invalid_argument;
                            x.values.resize(n);
                            return n > 0 ? f.apply_raw(n * sizeof(float), x.values.data()) : caf::none;
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
