// Cutting a shard's ranges into parts in the order backprop completes them.
#include "control/push_plan.hpp"

#include "control/slicing.hpp"

#include <algorithm>
#include <optional>

namespace actorps {

namespace {

// Appends `ranges` to out as parts of at most max_floats values, all complete after `ready`.
void close_part(std::vector<slice_ref>& ranges, uint32_t ready, uint32_t max_floats, std::vector<push_part>& out) {
  if (ranges.empty())
    return;
  for (auto& piece : pull_requests_for(ranges, 0, max_floats))
    out.push_back({std::move(piece.ranges), ready});
  ranges.clear();
}

} // namespace

push_plan::push_plan(const std::vector<std::vector<slice_ref>>& held, uint64_t bucket_floats, uint32_t max_floats)
  : parts_(held.size()), sent_(held.size(), 0), max_floats_(max_floats) {
  for (size_t s = 0; s < held.size(); ++s) {
    if (bucket_floats == 0) { // one part (split by size only), due at the end of backprop
      auto ranges = held[s];
      close_part(ranges, 0, max_floats, parts_[s]);
      continue;
    }
    auto order = held[s]; // the last variables first, each one's ranges in offset order
    std::stable_sort(order.begin(), order.end(),
                     [](const slice_ref& x, const slice_ref& y) { return x.variable > y.variable; });
    std::vector<slice_ref> bucket;
    uint64_t floats = 0;
    for (size_t i = 0; i < order.size(); ++i) {
      bucket.push_back(order[i]);
      floats += order[i].count;
      const bool variable_done = i + 1 == order.size() || order[i + 1].variable != order[i].variable;
      if (variable_done && floats >= bucket_floats) {
        close_part(bucket, order[i].variable, max_floats, parts_[s]);
        floats = 0;
      }
    }
    close_part(bucket, order.empty() ? 0 : order.back().variable, max_floats, parts_[s]);
  }
}

void push_plan::carry_rows(uint32_t s, uint32_t variable) {
  auto& parts = parts_.at(s);
  if (parts.empty())
    parts.push_back({{}, variable, true});
  parts.back().ready_after = std::min(parts.back().ready_after, variable);
  parts.back().rows = true;
}

size_t push_plan::keep_early(const std::function<bool(uint32_t)>& early) {
  auto floats = [](const push_part& p) {
    uint64_t n = 0;
    for (auto& r : p.ranges)
      n += r.count;
    return n;
  };
  for (auto& parts : parts_) {
    std::vector<push_part> kept;
    std::optional<push_part> carried; // a part that waits for the next one
    for (size_t p = 0; p < parts.size(); ++p) {
      auto part = std::move(parts[p]);
      if (carried && floats(*carried) + floats(part) <= max_floats_) {
        carried->ranges.insert(carried->ranges.end(), part.ranges.begin(), part.ranges.end());
        part.ranges = std::move(carried->ranges);
        part.rows = part.rows || carried->rows;
      } else if (carried) {
        kept.push_back(std::move(*carried));
      }
      carried.reset();
      if (p + 1 < parts.size() && !early(part.ready_after))
        carried = std::move(part);
      else
        kept.push_back(std::move(part));
    }
    parts = std::move(kept);
  }
  return count();
}

size_t push_plan::count() const {
  size_t n = 0;
  for (auto& parts : parts_)
    n += parts.size();
  return n;
}

void push_plan::begin_step() {
  std::fill(sent_.begin(), sent_.end(), 0);
}

std::vector<std::pair<uint32_t, uint32_t>> push_plan::due(uint32_t floor) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (uint32_t s = 0; s < parts_.size(); ++s)
    for (; sent_[s] < parts_[s].size() && parts_[s][sent_[s]].ready_after >= floor; ++sent_[s])
      out.emplace_back(s, static_cast<uint32_t>(sent_[s]));
  return out;
}

} // namespace actorps
