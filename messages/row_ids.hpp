// The row numbers of an embedding table that a slice carries (TF's IndexedSlices' indices): on
// the wire a count and one raw block of uint32 values, as tensors travel (CAF's per-element
// encoding would cost more than the rows' values). Layout in docs/protocol.md.
#pragma once

#include "messages/tensor.hpp"

#include <caf/deserializer.hpp>
#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/serializer.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace actorps {

/// Rows of one variable, in the order its slice's values hold them; empty: not a row slice.
struct row_ids {
  std::vector<uint32_t> ids{};

  bool empty() const { return ids.empty(); }
  size_t size() const { return ids.size(); }
};

inline bool operator==(const row_ids& x, const row_ids& y) { return x.ids == y.ids; }
inline bool operator!=(const row_ids& x, const row_ids& y) { return !(x == y); }

inline caf::error inspect(caf::serializer& f, row_ids& x) {
  auto n = x.ids.size();
  return caf::error::eval([&] { return f.begin_sequence(n); },
                          [&] { return n > 0 ? f.apply_raw(n * sizeof(uint32_t), x.ids.data()) : caf::none; },
                          [&] { return f.end_sequence(); });
}

/// Refuses a count above max_tensor_floats or above what the message holds, before allocating.
inline caf::error inspect(caf::deserializer& f, row_ids& x) {
  size_t n = 0;
  return caf::error::eval([&] { return f.begin_sequence(n); },
                          [&]() -> caf::error {
                            if (n > max_tensor_floats)
                              return detail::tensor_frame_error(std::to_string(n) + " row ids, more than "
                                                                + std::to_string(max_tensor_floats));
                            if (auto err = detail::check_available(f, uint64_t{n} * sizeof(uint32_t)))
                              return err;
                            x.ids.resize(n);
                            return n > 0 ? f.apply_raw(n * sizeof(uint32_t), x.ids.data()) : caf::none;
                          },
                          [&] { return f.end_sequence(); });
}

/// Any other inspector (e.g. to_string) sees the plain vector.
template <class Inspector>
typename std::enable_if<!std::is_base_of<caf::serializer, Inspector>::value
                          && !std::is_base_of<caf::deserializer, Inspector>::value,
                        typename Inspector::result_type>::type
inspect(Inspector& f, row_ids& x) {
  return f(caf::meta::type_name("rows"), x.ids);
}

} // namespace actorps
