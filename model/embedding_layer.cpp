// The embedding bag layer: its input is the batch's token id slots (compute/token_ids.hpp), its
// output each example's combined rows. Its gradient holds only the rows the batch picks, in the
// order touched_rows lists them (the network hands backward each slot's position there, and
// names the rows to the optimizer).
#include "model/layer_kinds.hpp"

#include "compute/row_prefetch.hpp"
#include "compute/token_ids.hpp"

#include <algorithm>
#include <numeric>


namespace actorps {

namespace {

class embedding_layer final : public layer {
public:
  embedding_layer(const image_shape& in, const layer_spec& ls)
    : ls_(ls), in_(in), g_{0, static_cast<int>(in.size()), 1 << ls.bucket_bits, ls.units, ls.combine == combiner::mean} {
  }

  caf::error allocate(backend&, int max_batch) override {
    gradient_rows_ = static_cast<int>(embedding_gradient_rows(ls_, in_, max_batch));
    return caf::none;
  }

  void forward(backend& be, const layer_io& io, const layer_vars& v, bool, uint64_t) override {
    be.embedding_bag(with_rows(io.rows), io.in, v.values[0], io.out);
  }

  // io.in: the batch's slots as positions in the compact gradient (touched_rows::positions)
  void backward(backend& be, const layer_io& io, float* dout, float*, const layer_vars& v) override {
    auto g = with_rows(io.rows);
    g.table_rows = gradient_rows_;
    be.embedding_bag_backward(g, io.in, dout, v.grads[0]);
  }

private:
  bag_geometry with_rows(int rows) const {
    auto g = g_;
    g.rows = rows;
    return g;
  }

  layer_spec ls_;
  image_shape in_;
  bag_geometry g_;
  int gradient_rows_ = 0;
};

} // namespace

std::unique_ptr<layer> make_embedding_layer(const image_shape& in, const layer_spec& ls) {
  return std::make_unique<embedding_layer>(in, ls);
}

namespace {

size_t power_of_two_at_least(size_t n) {
  size_t p = 1;
  while (p < n)
    p <<= 1;
  return p;
}

} // namespace

size_t embedding_gradient_rows(const layer_spec& ls, const image_shape& in, int max_batch) {
  const size_t slots = static_cast<size_t>(std::max(max_batch, 1)) * in.size();
  return power_of_two_at_least(std::min(size_t{1} << ls.bucket_bits, slots));
}

touched_rows::touched_rows(size_t table_rows, size_t max_slots)
  : table_rows_(table_rows), places_(std::min<size_t>(max_slots, 1024)) { // (it grows to the most distinct rows a batch brings)
}

bool touched_rows::collect_compact(const float* slots, int rows, int tokens) {
  uint32_t next = 0; // the rows named so far: 0 ... next - 1
  for (size_t r = 0; r < static_cast<size_t>(rows); ++r) {
    const size_t first = r * static_cast<size_t>(tokens);
    uint32_t id = 0;
    for (size_t s = first; s < first + static_cast<size_t>(tokens) && decode_token(slots[s], id); ++s) {
      if (id > next || id >= table_rows_)
        return false; // (the hashing path writes every slot this one wrote)
      next += id == next ? 1 : 0;
      positions_[s] = slots[s]; // (its own position: an id is its row's place)
    }
  }
  rows_.resize(next);
  std::iota(rows_.begin(), rows_.end(), size_t{0});
  return true;
}

void touched_rows::adopt(const std::vector<uint32_t>& rows, std::vector<float>& positions) {
  rows_.assign(rows.begin(), rows.end());
  positions_.swap(positions);
}

void touched_rows::take_renumbered(size_t distinct) {
  rows_.resize(std::min(distinct, table_rows_));
  std::iota(rows_.begin(), rows_.end(), size_t{0});
  positions_.clear();
}

const std::vector<size_t>& touched_rows::collect(const float* slots, int rows, int tokens) {
  rows_.clear();
  positions_.assign(static_cast<size_t>(rows) * static_cast<size_t>(tokens), 0.0f);
  if (collect_compact(slots, rows, tokens))
    return rows_;
  const auto mask = static_cast<uint32_t>(table_rows_ - 1);
  // The places' table is larger than the first caches and each id's entry lies anywhere in it: a
  // cursor rows_ahead ids ahead asks for each one's.
  id_cursor ahead{slots, static_cast<size_t>(rows) * static_cast<size_t>(tokens)};
  auto ask_next = [&] {
    uint32_t id = 0;
    if (ahead.next(id))
      places_.prefetch(id & mask);
  };
  for (size_t k = 0; k < rows_ahead; ++k)
    ask_next();
  for (size_t r = 0; r < static_cast<size_t>(rows); ++r) {
    const size_t first = r * static_cast<size_t>(tokens);
    uint32_t id = 0;
    for (size_t s = first; s < first + static_cast<size_t>(tokens) && decode_token(slots[s], id); ++s) {
      ask_next();
      const uint32_t row = id & mask;
      const auto [place, fresh] = places_.place(row, static_cast<uint32_t>(rows_.size()));
      if (fresh)
        rows_.push_back(row);
      positions_[s] = encode_token(place);
    }
  }
  places_.clear(rows_); // (the next batch finds an empty table)
  return rows_;
}

} // namespace actorps
