// Renumbering a batch's ids, and the row slices a worker pulls and pushes (see row_exchange.hpp).
#include "control/row_exchange.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "compute/row_prefetch.hpp"
#include "control/placement.hpp"

#include <algorithm>
#include <numeric>

namespace actorps {

row_exchange::row_exchange(const placement_plan& plan, uint32_t variable, size_t max_slots)
  : variable_(variable), cols_(static_cast<uint32_t>(plan.variables.at(variable).cols)),
    table_rows_(static_cast<size_t>(plan.variables[variable].rows)), max_slots_(max_slots) {
  for (auto& p : plan.parts)
    if (p.variable == variable)
      parts_.push_back({part_offset(plan, p), static_cast<uint32_t>(p.row_begin), p.shard, {}, {}});
  by_mod_ = rows_permuted(plan, variable);
  index_parts();
}

void row_exchange::index_parts() {
  const size_t n = parts_.size();
  if (n < 2)
    return;
  if (by_mod_) {
    div_magic_ = UINT64_MAX / n + 1;
    return;
  }
  size_t smallest = table_rows_;
  for (size_t k = 0; k < n; ++k)
    smallest = std::min<size_t>(smallest, (k + 1 < n ? parts_[k + 1].row_begin : table_rows_) - parts_[k].row_begin);
  if (smallest == 0)
    return;
  bucket_shift_ = 0;
  while ((size_t{2} << bucket_shift_) <= smallest)
    ++bucket_shift_;
  const size_t buckets = ((table_rows_ - 1) >> bucket_shift_) + 1;
  if (buckets > (size_t{1} << 16)) // (a part far smaller than the others: each row searched)
    return;
  bucket_part_.resize(buckets);
  for (size_t b = 0; b < buckets; ++b)
    bucket_part_[b] = static_cast<uint32_t>(part_of(static_cast<uint32_t>(b << bucket_shift_)));
  for (auto& p : parts_)
    part_begin_.push_back(p.row_begin);
  part_begin_.push_back(table_rows_);
}

int row_exchange::local_bits(size_t table_rows, size_t max_slots) {
  int bits = 0;
  while ((size_t{1} << bits) < std::min(table_rows, std::max<size_t>(max_slots, 1)))
    ++bits;
  return std::max(bits, 1);
}

size_t row_exchange::part_of(uint32_t row) const {
  auto after = std::upper_bound(parts_.begin(), parts_.end(), row,
                                [](uint32_t r, const part& p) { return r < p.row_begin; });
  return static_cast<size_t>(after - parts_.begin()) - 1; // (part 0 starts at row 0)
}

batch_renumbering::batch_renumbering(size_t table_rows, size_t max_slots) : touched_(table_rows, max_slots) {
}

void batch_renumbering::renumber(float* slots, int rows, int tokens, std::vector<uint32_t>& distinct) {
  const auto& found = touched_.collect(slots, rows, tokens);
  const auto& local = touched_.positions();
  std::copy(local.begin(), local.end(), slots);
  distinct.assign(found.begin(), found.end());
}

void row_exchange::renumber(float* slots, int rows, int tokens) {
  if (!renumbering_)
    renumbering_.emplace(table_rows_, max_slots_);
  renumbering_->renumber(slots, rows, tokens, table_rows_of_);
  group();
}

void row_exchange::adopt(const std::vector<uint32_t>& distinct) {
  table_rows_of_ = distinct;
  group();
}

void row_exchange::group() {
  for (auto& p : parts_) {
    p.rows.clear();
    p.local.clear();
  }
  if (parts_.size() == 1) { // (one part from row 0: its stored rows are the table's, its locals all of them)
    auto& p = parts_.front();
    p.rows = table_rows_of_;
    p.local.resize(table_rows_of_.size());
    std::iota(p.local.begin(), p.local.end(), uint32_t{0});
    return;
  }
  // (the parts' stored rows: control/placement's stored_row)
  const auto n = static_cast<uint32_t>(parts_.size());
  const auto rows = static_cast<uint32_t>(table_rows_of_.size());
  if (by_mod_) {
    for (uint32_t l = 0; l < rows; ++l) {
      const uint32_t row = table_rows_of_[l];
      const auto q = static_cast<uint32_t>((static_cast<unsigned __int128>(div_magic_) * row) >> 64); // row / n
      auto& p = parts_[row - q * n];
      p.rows.push_back(p.row_begin + q);
      p.local.push_back(l);
    }
  } else if (!bucket_part_.empty()) {
    for (uint32_t l = 0; l < rows; ++l) {
      const uint32_t row = table_rows_of_[l];
      uint32_t k = bucket_part_[row >> bucket_shift_];
      k += row >= part_begin_[k + 1];
      parts_[k].rows.push_back(row);
      parts_[k].local.push_back(l);
    }
  } else {
    for (uint32_t l = 0; l < rows; ++l) {
      auto& p = parts_[part_of(table_rows_of_[l])];
      p.rows.push_back(table_rows_of_[l]);
      p.local.push_back(l);
    }
  }
}

std::vector<uint32_t> row_exchange::shards() const {
  std::vector<uint32_t> out;
  for (auto& p : parts_)
    if (!p.rows.empty())
      out.push_back(p.shard);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<slice_ref> row_exchange::pulls(uint32_t shard, size_t max_floats) const {
  const size_t run = std::max<size_t>(1, max_floats / cols_); // rows per range
  std::vector<slice_ref> out;
  for (auto& p : parts_)
    if (p.shard == shard)
      for (size_t first = 0; first < p.rows.size(); first += run) {
        const size_t n = std::min(run, p.rows.size() - first);
        std::vector<uint32_t> ids(p.rows.begin() + static_cast<std::ptrdiff_t>(first),
                                  p.rows.begin() + static_cast<std::ptrdiff_t>(first + n));
        out.push_back({variable_, p.offset, static_cast<uint32_t>(n * cols_), row_ids{std::move(ids)}});
      }
  return out;
}

caf::error row_exchange::place(const variable_slice& slice, float* local, size_t max_floats) const {
  auto asked = std::find_if(parts_.begin(), parts_.end(), [&](const part& p) { return p.offset == slice.offset; });
  // (one run of the part's rows, as pulls() with max_floats made them)
  const auto& ids = slice.rows.ids;
  const size_t run = std::max<size_t>(1, max_floats / cols_);
  size_t first = 0;
  if (asked != parts_.end() && !ids.empty())
    first = static_cast<size_t>(std::find(asked->rows.begin(), asked->rows.end(), ids.front()) - asked->rows.begin());
  if (slice.variable != variable_ || asked == parts_.end() || ids.empty() || first % run != 0
      || first >= asked->rows.size() || ids.size() != std::min(run, asked->rows.size() - first)
      || !std::equal(ids.begin(), ids.end(), asked->rows.begin() + static_cast<std::ptrdiff_t>(first))
      || slice.data.values.size() != ids.size() * cols_)
    return caf::make_error(errc::protocol_error, cat("a row slice of variable ", slice.variable, " at offset ",
                                                     slice.offset, " (", slice.rows.size(), " rows, ",
                                                     slice.data.values.size(), " values) is not one this batch asked for"));
  copy_rows_to(slice.data.values.data(), cols_, asked->local.data() + first, ids.size(), local);
  return caf::none;
}

bool row_exchange::holds_every_row(const variable_slice& slice) const {
  const auto& ids = slice.rows.ids;
  auto holding = std::find_if(parts_.begin(), parts_.end(), [&](const part& p) { return p.offset == slice.offset; });
  // (a part's local rows ascend: all of the batch's are 0 .. distinct() - 1 in order)
  return slice.variable == variable_ && holding != parts_.end() && holding->local.size() == distinct()
         && ids == holding->rows && slice.data.values.size() == ids.size() * size_t{cols_};
}

caf::expected<std::vector<variable_slice>> row_exchange::gradients(uint32_t shard, const std::vector<size_t>& order,
                                                                   const float* grad) const {
  bool in_order = order.size() == table_rows_of_.size(); // (grad row j is local row j: each part's own list picks them)
  for (size_t j = 0; in_order && j < order.size(); ++j)
    in_order = order[j] == j;
  constexpr size_t none = SIZE_MAX;
  std::vector<size_t> at; // per local row: its row in grad (not made where they are in order)
  if (!in_order) {
    at.assign(table_rows_of_.size(), none);
    for (size_t j = 0; j < order.size(); ++j) {
      if (order[j] >= at.size())
        return caf::make_error(errc::protocol_error, cat("the table's gradient names local row ", order[j], " of ",
                                                         at.size()));
      at[order[j]] = j;
    }
  }
  std::vector<variable_slice> out;
  std::vector<uint32_t> from; // per row of a part: its row in grad (a lacking one: 0, then zeroed)
  for (auto& p : parts_) {
    if (p.shard != shard || p.rows.empty())
      continue;
    const uint32_t* picks = p.local.data();
    if (!in_order) {
      from.clear();
      for (uint32_t l : p.local)
        from.push_back(static_cast<uint32_t>(at[l] == none ? 0 : at[l]));
      picks = from.data();
    }
    float_vector values(p.rows.size() * cols_); // (every row written below)
    copy_rows_from(grad, cols_, picks, p.local.size(), values.data());
    for (size_t j = 0; !in_order && j < p.local.size(); ++j)
      if (at[p.local[j]] == none)
        zero_row(values.data() + j * cols_, cols_);
    out.push_back({variable_, p.offset, {std::move(values)}, false, row_ids{p.rows}});
  }
  return out;
}

} // namespace actorps
