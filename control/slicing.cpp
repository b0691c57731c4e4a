// Slicing variables for the wire.
#include "control/slicing.hpp"

#include "control/placement.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "model/column_split.hpp"

#include <algorithm>

namespace actorps {

namespace {

// Calls emit(var, offset, count, request_index) for every piece of the held ranges, starting a
// new request whenever the current one would exceed max_floats.
template <class F>
void for_each_piece(const std::vector<slice_ref>& held, uint32_t max_floats, F emit) {
  size_t request = 0, used = 0;
  bool any = false;
  for (auto& range : held) {
    const uint32_t k = range.variable, size = range.offset + range.count;
    for (uint32_t offset = range.offset; offset < size;) {
      if (any && used == max_floats) {
        ++request;
        used = 0;
      }
      uint32_t count = std::min<uint32_t>(size - offset, max_floats - static_cast<uint32_t>(used));
      emit(k, offset, count, request);
      any = true;
      used += count;
      offset += count;
    }
  }
}

} // namespace

std::vector<slice_ref> held_ranges(const placement_plan& plan, uint32_t shard, uint32_t slice,
                                   uint32_t slices) {
  std::vector<slice_ref> out;
  for (uint32_t i : parts_of(plan, shard)) {
    auto& part = plan.parts[i];
    const auto cols = static_cast<uint32_t>(plan.variables[part.variable].cols);
    const auto first = static_cast<uint32_t>(part.row_begin);
    if (slices == 1) {
      out.push_back({part.variable, part_offset(plan, part), static_cast<uint32_t>(part_floats(plan, part))});
      continue;
    }
    auto mine = slice_columns(static_cast<int>(cols), static_cast<int>(slice), static_cast<int>(slices));
    for (uint32_t r = first; r < first + static_cast<uint32_t>(part.rows); ++r)
      out.push_back({part.variable, r * cols + static_cast<uint32_t>(mine.begin), static_cast<uint32_t>(mine.size())});
  }
  return out;
}

std::vector<pull_request> pull_requests_for(const std::vector<slice_ref>& held, uint32_t worker,
                                            uint32_t max_floats) {
  std::vector<pull_request> out;
  for_each_piece(held, max_floats, [&](uint32_t k, uint32_t offset, uint32_t count, size_t req) {
    if (out.size() <= req)
      out.push_back(pull_request::of(worker, {}));
    out[req].ranges.push_back({k, offset, count});
  });
  return out;
}

std::vector<slice_ref> ranges_of(const std::vector<variable_slice>& slices) {
  std::vector<slice_ref> out;
  for (auto& s : slices)
    if (!s.by_rows())
      out.push_back({s.variable, s.offset, static_cast<uint32_t>(s.data.values.size())});
  return out;
}

caf::error scatter_slices(const pull_reply& reply, std::vector<std::vector<float>>& values) {
  for (auto& slice : reply.slices) {
    if (slice.by_rows())
      return caf::make_error(errc::protocol_error, cat("pull reply slice of variable ", slice.variable,
                                                       " holds table rows, not a range of values"));
    if (slice.variable >= values.size()
        || static_cast<size_t>(slice.offset) + slice.data.values.size() > values[slice.variable].size())
      return caf::make_error(errc::protocol_error, cat("pull reply slice of variable ", slice.variable,
                                                       " at offset ", slice.offset, " does not fit"));
    std::copy(slice.data.values.begin(), slice.data.values.end(),
              values[slice.variable].begin() + slice.offset);
  }
  return caf::none;
}

caf::expected<std::vector<push_request>> push_requests_for(const std::vector<slice_ref>& held,
                                                           uint32_t worker, uint64_t step,
                                                           uint32_t max_floats, const gradient_source& fill) {
  std::vector<push_request> out;
  caf::error first;
  for_each_piece(held, max_floats, [&](uint32_t k, uint32_t offset, uint32_t count, size_t req) {
    if (out.size() <= req)
      out.push_back(push_request::of(worker, step));
    out[req].grads.push_back({k, offset, {float_vector(count)}}); // filled next, not zeroed
    if (!first)
      first = fill(k, offset, count, out[req].grads.back().data.values.data());
  });
  if (first)
    return first;
  return out;
}

} // namespace actorps
