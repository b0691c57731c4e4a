// Dense: out = f(in W + b). Conv: out = f(im2col(in) W + b) over NHWC, in chunks of examples so
// that the column buffer stays small; backward reuses forward's columns when the batch fit in one
// chunk (else recomputes each chunk's) for dW, then overwrites them with the column gradient
// that col2im folds back. Max pooling keeps each
// window's winner; dropout keeps its mask.
#include "model/layers.hpp"

#include <algorithm>

namespace actorps {

namespace {

// The column buffer of a conv layer holds at most this many floats (16 MiB).
constexpr size_t column_budget = size_t{1} << 22;

void activation_backward(backend& be, const std::optional<activation>& act, matrix out, float* dout) {
  if (act)
    be.activate_backward(*act, out, {dout, out.rows, out.cols}, {dout, out.rows, out.cols});
}

class dense_layer final : public layer {
public:
  dense_layer(int inputs, int units, std::optional<activation> act)
    : inputs_(inputs), units_(units), act_(act) {
  }

  caf::error allocate(backend&, int) override {
    return caf::none;
  }

  void forward(backend& be, const layer_io& io, const float* w, const float* b, bool, uint64_t) override {
    matrix out{io.out, io.rows, units_};
    be.gemm(false, false, 1.0f, in(io), {const_cast<float*>(w), inputs_, units_}, 0.0f, out);
    be.add_bias(out, b);
    if (act_)
      be.activate(*act_, out, out);
  }

  void backward(backend& be, const layer_io& io, float* dout, float* din, const float* w,
                float* dw, float* db) override {
    matrix delta{dout, io.rows, units_};
    activation_backward(be, act_, {io.out, io.rows, units_}, dout);
    be.gemm(true, false, 1.0f, in(io), delta, 0.0f, {dw, inputs_, units_});
    be.sum_rows(delta, db);
    if (din != nullptr)
      be.gemm(false, true, 1.0f, delta, {const_cast<float*>(w), inputs_, units_}, 0.0f,
              {din, io.rows, inputs_});
  }

private:
  matrix in(const layer_io& io) const {
    return {const_cast<float*>(io.in), io.rows, inputs_};
  }

  int inputs_;
  int units_;
  std::optional<activation> act_;
};

class conv_layer final : public layer {
public:
  conv_layer(window_geometry g, int channels, std::optional<activation> act)
    : g_(g), channels_(channels), act_(act) {
    size_t per_example = static_cast<size_t>(g_.positions()) * g_.window_size();
    chunk_ = static_cast<int>(std::max<size_t>(1, column_budget / per_example));
  }

  caf::error allocate(backend& be, int max_batch) override {
    chunk_ = std::min(chunk_, max_batch);
    return allocate_into(be, static_cast<size_t>(chunk_) * g_.positions() * g_.window_size(), cols_);
  }

  void forward(backend& be, const layer_io& io, const float* w, const float* b, bool, uint64_t) override {
    for (int first = 0; first < io.rows; first += chunk_) {
      int n = std::min(chunk_, io.rows - first);
      be.im2col(g_, n, io.in + first * g_.in_size(), cols_.data());
      be.gemm(false, false, 1.0f, columns(n), weights(w), 0.0f, out_rows(io.out, first, n));
    }
    columns_of_ = io.rows <= chunk_ ? columns_hold::whole_batch : columns_hold::nothing;
    matrix out = out_rows(io.out, 0, io.rows);
    be.add_bias(out, b);
    if (act_)
      be.activate(*act_, out, out);
  }

  void backward(backend& be, const layer_io& io, float* dout, float* din, const float* w,
                float* dw, float* db) override {
    activation_backward(be, act_, out_rows(io.out, 0, io.rows), dout);
    be.sum_rows(out_rows(dout, 0, io.rows), db);
    for (int first = 0; first < io.rows; first += chunk_) {
      int n = std::min(chunk_, io.rows - first);
      matrix delta = out_rows(dout, first, n);
      if (columns_of_ != columns_hold::whole_batch)
        be.im2col(g_, n, io.in + first * g_.in_size(), cols_.data());
      be.gemm(true, false, 1.0f, columns(n), delta, first == 0 ? 0.0f : 1.0f,
              {dw, g_.window_size(), channels_});
      if (din != nullptr) {
        be.gemm(false, true, 1.0f, delta, weights(w), 0.0f, columns(n));
        be.col2im(g_, n, cols_.data(), din + first * g_.in_size());
        columns_of_ = columns_hold::nothing;
      }
    }
  }

private:
  matrix columns(int n) const {
    return cols_.as_matrix(n * g_.positions(), g_.window_size());
  }

  matrix weights(const float* w) const {
    return {const_cast<float*>(w), g_.window_size(), channels_};
  }

  matrix out_rows(float* base, int first, int n) const {
    const size_t per_example = static_cast<size_t>(g_.positions()) * channels_;
    return {base + first * per_example, n * g_.positions(), channels_};
  }

  // What cols_ holds: the columns of the whole batch of the latest forward (backward, which
  // always follows the forward of its batch, then skips im2col), or nothing it can reuse.
  enum class columns_hold { nothing, whole_batch };

  window_geometry g_;
  int channels_;
  std::optional<activation> act_;
  int chunk_;
  buffer cols_;
  columns_hold columns_of_ = columns_hold::nothing;
};

class maxpool_layer final : public layer {
public:
  explicit maxpool_layer(window_geometry g) : g_(g) {
  }

  caf::error allocate(backend& be, int max_batch) override {
    return allocate_into(be, static_cast<size_t>(max_batch) * g_.positions() * g_.channels, argmax_);
  }

  void forward(backend& be, const layer_io& io, const float*, const float*, bool, uint64_t) override {
    be.maxpool(g_, io.rows, io.in, io.out, argmax_.data());
  }

  void backward(backend& be, const layer_io& io, float* dout, float* din, const float*, float*,
                float*) override {
    if (din != nullptr)
      be.maxpool_backward(g_, io.rows, dout, argmax_.data(), din);
  }

private:
  window_geometry g_;
  buffer argmax_;
};

class dropout_layer final : public layer {
public:
  dropout_layer(size_t size, float rate) : size_(size), rate_(rate) {
  }

  caf::error allocate(backend& be, int max_batch) override {
    return allocate_into(be, static_cast<size_t>(max_batch) * size_, mask_);
  }

  void forward(backend& be, const layer_io& io, const float*, const float*, bool training,
               uint64_t seed) override {
    const size_t n = static_cast<size_t>(io.rows) * size_;
    if (training && rate_ > 0.0f)
      be.dropout(n, rate_, seed, io.in, io.out, mask_.data());
    else
      be.copy(io.in, n, io.out);
    trained_ = training && rate_ > 0.0f;
  }

  void backward(backend& be, const layer_io& io, float* dout, float* din, const float*, float*,
                float*) override {
    if (din == nullptr)
      return;
    const size_t n = static_cast<size_t>(io.rows) * size_;
    if (trained_)
      be.multiply(n, dout, mask_.data(), din);
    else
      be.copy(dout, n, din);
  }

private:
  size_t size_;
  float rate_;
  bool trained_ = false;
  buffer mask_;
};

} // namespace

std::unique_ptr<layer> make_layer(const model_spec& spec, size_t l) {
  const layer_spec& ls = spec.layers[l];
  image_shape in = l == 0 ? spec.input : spec.output_shapes()[l - 1];
  switch (ls.kind) {
    case layer_kind::dense: return std::make_unique<dense_layer>(static_cast<int>(in.size()), ls.units, ls.act);
    case layer_kind::conv: return std::make_unique<conv_layer>(spec.geometry(l), ls.units, ls.act);
    case layer_kind::maxpool: return std::make_unique<maxpool_layer>(spec.geometry(l));
    case layer_kind::dropout: return std::make_unique<dropout_layer>(in.size(), ls.rate);
  }
  return nullptr;
}

} // namespace actorps
