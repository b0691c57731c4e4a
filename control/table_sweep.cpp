// A table's chunks and the part ranges that make them (see table_sweep.hpp).
#include "control/table_sweep.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "control/placement.hpp"

#include <algorithm>

namespace actorps {

table_sweep::table_sweep(const placement_plan& plan, uint32_t variable, size_t max_floats)
  : variable_(variable), cols_(static_cast<uint32_t>(plan.variables.at(variable).cols)),
    rows_(static_cast<size_t>(plan.variables[variable].rows)),
    chunk_rows_(std::max<size_t>(1, max_floats / std::max<uint32_t>(cols_, 1))),
    stride_(row_stride(plan, variable)) {
  for (auto& p : plan.parts)
    if (p.variable == variable)
      parts_.push_back({p.shard, static_cast<size_t>(p.row_begin), static_cast<size_t>(p.rows),
                        table_row(plan, variable, static_cast<uint32_t>(p.row_begin))});
}

size_t table_sweep::rows_of(size_t i) const {
  return first_row(i) >= rows_ ? 0 : std::min(chunk_rows_, rows_ - first_row(i));
}

std::pair<size_t, size_t> table_sweep::span(const part& p, size_t a, size_t b) const {
  // stored row j of p is table row p.first + j * stride: the j with a <= that < b
  auto from = [&](size_t row) { return row <= p.first ? 0 : std::min(p.rows, (row - p.first + stride_ - 1) / stride_); };
  return {from(a), from(b)};
}

std::vector<std::pair<uint32_t, slice_ref>> table_sweep::reads(size_t i) const {
  std::vector<std::pair<uint32_t, slice_ref>> out;
  const size_t a = first_row(i), b = a + rows_of(i);
  for (auto& p : parts_) {
    auto [lo, hi] = span(p, a, b);
    if (lo < hi)
      out.push_back({p.shard, slice_ref{variable_, static_cast<uint32_t>((p.stored_begin + lo) * cols_),
                                        static_cast<uint32_t>((hi - lo) * cols_)}});
  }
  return out;
}

caf::error table_sweep::place(size_t i, const variable_slice& got, float* chunk) const {
  const size_t a = first_row(i), b = a + rows_of(i);
  for (auto& p : parts_) {
    auto [lo, hi] = span(p, a, b);
    if (lo == hi || got.variable != variable_ || got.by_rows() || got.offset != (p.stored_begin + lo) * cols_
        || got.data.values.size() != (hi - lo) * cols_)
      continue;
    const float* from = got.data.values.data();
    for (size_t j = lo; j < hi; ++j, from += cols_)
      std::copy(from, from + cols_, chunk + (p.first + j * stride_ - a) * cols_);
    return caf::none;
  }
  return caf::make_error(errc::protocol_error, cat("a slice of variable ", got.variable, " at offset ", got.offset, " (",
                                                   got.data.values.size(), " values) is not a read of rows ", a,
                                                   " to ", b, " of the table"));
}

} // namespace actorps
