// Per-worker views of a shard's values and top-k deltas against them.
#include "control/value_views.hpp"

#include "compute/host_ops.hpp"
#include "wire/gradient_encoder.hpp"

#include <algorithm>

namespace actorps {

void merge_into(float* dst, const variable_slice& slice) {
  auto& values = slice.data.values;
  if (slice.delta)
    add_into(dst, values.data(), values.size());
  else
    std::copy(values.begin(), values.end(), dst);
}

void value_views::record(uint32_t w, uint32_t var, uint32_t offset, const float* values, size_t n) {
  views_[{w, var, offset}].assign(values, values + n);
}

void value_views::encode(uint32_t w, variable_slice& slice, double ratio, wire_precision p) {
  auto& values = slice.data.values;
  const size_t n = values.size();
  auto it = views_.find({w, slice.variable, slice.offset});
  if (it == views_.end() || it->second.size() != n) { // nothing to diff against: the values
    set_wire_precision(slice, p);
    record(w, slice.variable, slice.offset, values.data(), n);
    slice.delta = false;
    slice.data.sparse = false;
    return;
  }
  auto& view = it->second;
  for (size_t i = 0; i < n; ++i)
    values[i] -= view[i];
  keep_topk(values.data(), n, topk_count(ratio, n));
  set_wire_precision(slice, p);
  slice.delta = true;
  slice.data.sparse = true;
  merge_into(view.data(), slice); // the worker adds the same floats in the same way
}

void value_views::forget(uint32_t w) {
  for (auto it = views_.begin(); it != views_.end();)
    it = std::get<0>(it->first) == w ? views_.erase(it) : std::next(it);
}

size_t value_views::floats() const {
  size_t n = 0;
  for (auto& [key, view] : views_)
    n += view.size();
  return n;
}

} // namespace actorps
