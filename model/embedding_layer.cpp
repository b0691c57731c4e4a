// The embedding bag layer: its input is the batch's token id slots (compute/token_ids.hpp), its
// output each example's combined rows; backward writes only the rows the ids pick (the network
// names them to the optimizer: rows_of_batch).
#include "model/layer_kinds.hpp"

#include "compute/token_ids.hpp"

#include <algorithm>

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

std::vector<size_t> rows_of_batch(const float* slots, int rows, int tokens, int table_rows) {
  std::vector<size_t> out;
  const auto mask = static_cast<uint32_t>(table_rows - 1);
  for (int r = 0; r < rows; ++r) {
    const float* row = slots + static_cast<size_t>(r) * static_cast<size_t>(tokens);
    uint32_t id = 0;
    for (int t = 0; t < tokens && decode_token(row[t], id); ++t)
      out.push_back(id & mask);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

} // namespace actorps
