// The embedding bag layer: its input is the batch's token id slots (compute/token_ids.hpp), its
// output each example's combined rows; backward writes only the rows the ids pick (the network
// names them to the optimizer: touched_rows).
#include "model/layer_kinds.hpp"

#include "compute/token_ids.hpp"


namespace actorps {

namespace {

class embedding_layer final : public layer {
public:
  embedding_layer(const image_shape& in, const layer_spec& ls)
    : g_{0, static_cast<int>(in.size()), 1 << ls.bucket_bits, ls.units, ls.combine == combiner::mean} {
  }

  caf::error allocate(backend&, int) override {
    return caf::none;
  }

  void forward(backend& be, const layer_io& io, const layer_vars& v, bool, uint64_t) override {
    be.embedding_bag(with_rows(io.rows), io.in, v.values[0], io.out);
  }

  void backward(backend& be, const layer_io& io, float* dout, float*, const layer_vars& v) override {
    be.embedding_bag_backward(with_rows(io.rows), io.in, dout, v.grads[0]);
  }

private:
  bag_geometry with_rows(int rows) const {
    auto g = g_;
    g.rows = rows;
    return g;
  }

  bag_geometry g_;
};

} // namespace

std::unique_ptr<layer> make_embedding_layer(const image_shape& in, const layer_spec& ls) {
  return std::make_unique<embedding_layer>(in, ls);
}

const std::vector<size_t>& touched_rows::collect(const float* slots, int rows, int tokens) {
  rows_.clear();
  const auto mask = static_cast<uint32_t>(table_rows_ - 1);
  for (int r = 0; r < rows; ++r) {
    const float* row = slots + static_cast<size_t>(r) * static_cast<size_t>(tokens);
    uint32_t id = 0;
    for (int t = 0; t < tokens && decode_token(row[t], id); ++t) {
      const size_t at = id & mask;
      uint64_t& word = marks_[at / 64];
      const uint64_t bit = uint64_t{1} << (at % 64);
      if ((word & bit) == 0) {
        word |= bit;
        rows_.push_back(at);
      }
    }
  }
  for (size_t at : rows_) // (the marks are clear again for the next batch)
    marks_[at / 64] &= ~(uint64_t{1} << (at % 64));
  return rows_;
}

} // namespace actorps
