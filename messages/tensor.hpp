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

#include <cstdint>
#include <vector>

namespace actorps {

/// A float buffer that travels as raw bytes.
struct tensor_buffer {
  std::vector<float> values;
};

inline bool operator==(const tensor_buffer& x, const tensor_buffer& y) {
  return x.values == y.values;
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
