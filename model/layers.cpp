// Dense: out = f(in W + b). Conv: out = f(im2col(in) W + b) over NHWC: on backends with a direct
// convolution (backend::direct_conv) in one call each way, else in chunks of examples so that the
// column buffer stays small; backward reuses forward's columns when the batch fit in one
// chunk (else recomputes each chunk's) for dW, then overwrites them with the column gradient
// that col2im folds back. Max pooling keeps each window's winner; dropout keeps its mask. Batch
// normalisation normalises each channel over the batch and positions; global average pooling is
// a product with a constant averaging matrix; a residual block runs its layers on buffers of its
// own and adds the shortcut. (Depthwise, separable and LRN layers: channel_layers.cpp.)
#include "model/layers.hpp"

#include "model/layer_kinds.hpp"

#include <algorithm>
#include <vector>

namespace actorps {

namespace {

// The floats a conv layer's column buffer holds at most: 16 MiB on a GPU (fewer, larger
// products), 512 KiB on the CPU (half a core's L2 here: resnet20 +60% over 16 MiB), so that the
// columns of a chunk stay in the cache from im2col through the products to col2im (backward
// then builds them again, from the cache).
size_t column_budget(const backend& be) {
  return be.is_gpu() ? size_t{1} << 22 : size_t{1} << 17;
}

class dense_layer final : public layer {
public:
  dense_layer(int inputs, int units, std::optional<activation> act)
    : inputs_(inputs), units_(units), act_(act) {
  }

  caf::error allocate(backend&, int) override {
    return caf::none;
  }

  void forward(backend& be, const layer_io& io, const layer_vars& v, bool, uint64_t) override {
    const float* w = v.values[0];
    const float* b = v.values[1];
    matrix out{io.out, io.rows, units_};
    be.gemm(false, false, 1.0f, in(io), {const_cast<float*>(w), inputs_, units_}, 0.0f, out);
    be.add_bias(out, b);
    if (act_)
      be.activate(*act_, out, out);
  }

  void backward(backend& be, const layer_io& io, float* dout, float* din, const layer_vars& v) override {
    const float* w = v.values[0];
    float* dw = v.grads[0];
    float* db = v.grads[1];
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
  }

  caf::error allocate(backend& be, int max_batch) override {
    if (be.direct_conv(g_)) {
      columns_of_ = columns_hold::none_used;
      return caf::none;
    }
    const size_t per_example = static_cast<size_t>(g_.positions()) * g_.window_size();
    chunk_ = std::min(static_cast<int>(std::max<size_t>(1, column_budget(be) / per_example)), max_batch);
    return allocate_into(be, static_cast<size_t>(chunk_) * g_.positions() * g_.window_size(), cols_);
  }

  void forward(backend& be, const layer_io& io, const layer_vars& v, bool, uint64_t) override {
    const float* w = v.values[0];
    const float* b = v.values[1];
    if (columns_of_ == columns_hold::none_used)
      be.conv_forward(g_, io.rows, io.in, w, channels_, io.out);
    else
      forward_by_columns(be, io, w);
    matrix out = out_rows(io.out, 0, io.rows);
    be.add_bias(out, b);
    if (act_)
      be.activate(*act_, out, out);
  }

  void backward(backend& be, const layer_io& io, float* dout, float* din, const layer_vars& v) override {
    const float* w = v.values[0];
    float* dw = v.grads[0];
    float* db = v.grads[1];
    activation_backward(be, act_, out_rows(io.out, 0, io.rows), dout);
    be.sum_rows(out_rows(dout, 0, io.rows), db);
    if (columns_of_ == columns_hold::none_used)
      return be.conv_backward(g_, io.rows, io.in, dout, w, channels_, 0.0f, dw, din);
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
  void forward_by_columns(backend& be, const layer_io& io, const float* w) {
    for (int first = 0; first < io.rows; first += chunk_) {
      int n = std::min(chunk_, io.rows - first);
      be.im2col(g_, n, io.in + first * g_.in_size(), cols_.data());
      be.gemm(false, false, 1.0f, columns(n), weights(w), 0.0f, out_rows(io.out, first, n));
    }
    columns_of_ = io.rows <= chunk_ ? columns_hold::whole_batch : columns_hold::nothing;
  }

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
  // always follows the forward of its batch, then skips im2col), nothing it can reuse, or none
  // are used (the backend convolves directly; cols_ stays empty).
  enum class columns_hold { nothing, whole_batch, none_used };

  window_geometry g_;
  int channels_;
  std::optional<activation> act_;
  int chunk_ = 1;
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

  void forward(backend& be, const layer_io& io, const layer_vars&, bool, uint64_t) override {
    be.maxpool(g_, io.rows, io.in, io.out, argmax_.data());
  }

  void backward(backend& be, const layer_io& io, float* dout, float* din, const layer_vars&) override {
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

  void forward(backend& be, const layer_io& io, const layer_vars&, bool training, uint64_t seed) override {
    const size_t n = static_cast<size_t>(io.rows) * size_;
    if (training && rate_ > 0.0f)
      be.dropout(n, rate_, seed, io.in, io.out, mask_.data());
    else
      be.copy(io.in, n, io.out);
    trained_ = training && rate_ > 0.0f;
  }

  void backward(backend& be, const layer_io& io, float* dout, float* din, const layer_vars&) override {
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

// Per channel over the batch and positions (rows x positions by channels); in training the
// batch's moments go into the moving statistics' gradients and normalise, otherwise the moving
// statistics do. vars: gamma, beta, moving_mean, moving_variance.
class batchnorm_layer final : public layer {
public:
  batchnorm_layer(const image_shape& in, std::optional<activation> act)
    : positions_(in.height * in.width), channels_(in.channels), act_(act) {
  }

  caf::error allocate(backend&, int) override {
    return caf::none;
  }

  void forward(backend& be, const layer_io& io, const layer_vars& v, bool training, uint64_t) override {
    matrix x = rows(const_cast<float*>(io.in), io.rows), y = rows(io.out, io.rows);
    if (training) {
      be.channel_moments(x, v.grads[2], v.grads[3]);
      be.batch_norm(x, v.grads[2], v.grads[3], v.values[0], v.values[1], batchnorm_epsilon, y);
    } else {
      be.batch_norm(x, v.values[2], v.values[3], v.values[0], v.values[1], batchnorm_epsilon, y);
    }
    if (act_)
      be.activate(*act_, y, y);
  }

  void backward(backend& be, const layer_io& io, float* dout, float* din, const layer_vars& v) override {
    matrix y = rows(io.out, io.rows), dy = rows(dout, io.rows);
    activation_backward(be, act_, y, dout);
    be.batch_norm_backward(rows(const_cast<float*>(io.in), io.rows), dy, v.grads[2], v.grads[3], v.values[0],
                           batchnorm_epsilon, v.grads[0], v.grads[1], din != nullptr ? rows(din, io.rows) : dy);
  }

private:
  matrix rows(float* base, int examples) const {
    return {base, examples * positions_, channels_};
  }

  int positions_;
  int channels_;
  std::optional<activation> act_;
};

// out = in A with A (positions * channels x channels) averaging each channel over the positions;
// din = dout A^T.
class avgpool_layer final : public layer {
public:
  explicit avgpool_layer(const image_shape& in) : positions_(in.height * in.width), channels_(in.channels) {
  }

  caf::error allocate(backend& be, int) override {
    const size_t cols = static_cast<size_t>(channels_), rows = static_cast<size_t>(positions_) * cols;
    std::vector<float> host(rows * cols, 0.0f);
    for (size_t p = 0; p < static_cast<size_t>(positions_); ++p)
      for (size_t c = 0; c < cols; ++c)
        host[(p * cols + c) * cols + c] = 1.0f / static_cast<float>(positions_);
    if (auto err = allocate_into(be, host.size(), average_))
      return err;
    be.upload(host.data(), host.size(), average_.data());
    return caf::none;
  }

  void forward(backend& be, const layer_io& io, const layer_vars&, bool, uint64_t) override {
    be.gemm(false, false, 1.0f, {const_cast<float*>(io.in), io.rows, positions_ * channels_}, averaging(), 0.0f,
            {io.out, io.rows, channels_});
  }

  void backward(backend& be, const layer_io& io, float* dout, float* din, const layer_vars&) override {
    if (din != nullptr)
      be.gemm(false, true, 1.0f, {dout, io.rows, channels_}, averaging(), 0.0f, {din, io.rows, positions_ * channels_});
  }

private:
  matrix averaging() const {
    return average_.as_matrix(positions_ * channels_, channels_);
  }

  int positions_;
  int channels_;
  buffer average_;
};

// act(body(x) + shortcut(x)): the body's layers on activation buffers of the block's own, the
// shortcut x itself or a 1x1 convolution. Backward runs the body back on two ping-pong buffers,
// then adds the shortcut's input gradient. vars: the body's in order, then the shortcut's.
class residual_layer final : public layer {
public:
  residual_layer(const layer_spec& spec, const image_shape& in) : in_(in), act_(spec.act) {
    image_shape shape = in;
    for (auto& l : spec.body) {
      body_.push_back(make_layer(l, shape));
      model_spec one; // (the layer's own variable count on its input)
      one.input = shape;
      one.layers = {l};
      counts_.push_back(one.variable_counts().front());
      shape = output_shape(l, shape);
      sizes_.push_back(shape.size());
    }
    out_ = shape;
    if (auto g = shortcut_geometry(in, out_))
      shortcut_ = std::make_unique<conv_layer>(*g, out_.channels, std::nullopt);
  }

  caf::error allocate(backend& be, int max_batch) override {
    const size_t batch = static_cast<size_t>(max_batch);
    size_t widest = in_.size();
    acts_.resize(body_.size());
    for (size_t j = 0; j < body_.size(); ++j) {
      widest = std::max(widest, sizes_[j]);
      if (auto err = allocate_into(be, batch * sizes_[j], acts_[j]); err || (err = body_[j]->allocate(be, max_batch)))
        return err;
    }
    for (auto& d : deltas_)
      if (auto err = allocate_into(be, batch * widest, d))
        return err;
    if (auto err = allocate_into(be, batch * out_.size(), dsum_))
      return err;
    if (shortcut_) {
      if (auto err = allocate_into(be, batch * out_.size(), short_out_); err || (err = shortcut_->allocate(be, max_batch)))
        return err;
      if (auto err = allocate_into(be, batch * in_.size(), dshort_))
        return err;
    }
    return caf::none;
  }

  void forward(backend& be, const layer_io& io, const layer_vars& v, bool training, uint64_t seed) override {
    size_t var = 0;
    for (size_t j = 0; j < body_.size(); ++j) {
      body_[j]->forward(be, inner_io(io, j), offset(v, var), training, seed + j + 1);
      var += static_cast<size_t>(counts_[j]);
    }
    const size_t n = static_cast<size_t>(io.rows) * out_.size();
    be.copy(acts_.back().data(), n, io.out);
    if (shortcut_) {
      shortcut_->forward(be, {io.rows, io.in, short_out_.data()}, offset(v, var), training, seed);
      be.axpy(n, 1.0f, short_out_.data(), io.out);
    } else {
      be.axpy(n, 1.0f, io.in, io.out);
    }
    if (act_)
      be.activate(*act_, {io.out, io.rows, static_cast<int>(out_.size())}, {io.out, io.rows, static_cast<int>(out_.size())});
  }

  void backward(backend& be, const layer_io& io, float* dout, float* din, const layer_vars& v) override {
    const size_t n = static_cast<size_t>(io.rows) * out_.size();
    activation_backward(be, act_, {io.out, io.rows, static_cast<int>(out_.size())}, dout);
    be.copy(dout, n, dsum_.data());
    be.copy(dout, n, deltas_[0].data());
    std::vector<size_t> first(body_.size());
    for (size_t j = 0, var = 0; j < body_.size(); var += static_cast<size_t>(counts_[j]), ++j)
      first[j] = var;
    float* delta = deltas_[0].data();
    for (size_t j = body_.size(); j-- > 0;) {
      float* d_in = j == 0 ? din : deltas_[(body_.size() - j) % 2].data();
      body_[j]->backward(be, inner_io(io, j), delta, d_in, offset(v, first[j]));
      delta = d_in;
    }
    const size_t in_n = static_cast<size_t>(io.rows) * in_.size();
    if (shortcut_) {
      const size_t var = first.back() + static_cast<size_t>(counts_.back());
      shortcut_->backward(be, {io.rows, io.in, short_out_.data()}, dsum_.data(), din != nullptr ? dshort_.data() : nullptr,
                          offset(v, var));
      if (din != nullptr)
        be.axpy(in_n, 1.0f, dshort_.data(), din);
    } else if (din != nullptr) {
      be.axpy(in_n, 1.0f, dsum_.data(), din);
    }
  }

private:
  layer_io inner_io(const layer_io& io, size_t j) const {
    return {io.rows, j == 0 ? io.in : acts_[j - 1].data(), acts_[j].data()};
  }

  static layer_vars offset(const layer_vars& v, size_t by) {
    return {v.values + by, v.grads + by};
  }

  image_shape in_;
  image_shape out_;
  std::optional<activation> act_;
  std::vector<std::unique_ptr<layer>> body_;
  std::vector<int> counts_;    // per body layer: its variables
  std::vector<size_t> sizes_;  // per body layer: floats per example of its output
  std::vector<buffer> acts_;   // per body layer: its output
  buffer deltas_[2];           // ping-pong gradients through the body
  buffer dsum_;                // the gradient of the sum (after the block's activation)
  std::unique_ptr<layer> shortcut_; // the 1x1 projection, if any
  buffer short_out_;           // its output
  buffer dshort_;              // its input gradient
};

} // namespace

void activation_backward(backend& be, const std::optional<activation>& act, matrix out, float* dout) {
  if (act)
    be.activate_backward(*act, out, {dout, out.rows, out.cols}, {dout, out.rows, out.cols});
}

std::unique_ptr<layer> make_layer(const layer_spec& ls, const image_shape& in) {
  switch (ls.kind) {
    case layer_kind::dense: return std::make_unique<dense_layer>(static_cast<int>(in.size()), ls.units, ls.act);
    case layer_kind::conv: return std::make_unique<conv_layer>(geometry_of(ls, in), ls.units, ls.act);
    case layer_kind::maxpool: return std::make_unique<maxpool_layer>(geometry_of(ls, in));
    case layer_kind::dropout: return std::make_unique<dropout_layer>(in.size(), ls.rate);
    case layer_kind::batchnorm: return std::make_unique<batchnorm_layer>(in, ls.act);
    case layer_kind::avgpool: return std::make_unique<avgpool_layer>(in);
    case layer_kind::residual: return std::make_unique<residual_layer>(ls, in);
    case layer_kind::depthwise: return make_depthwise_layer(geometry_of(ls, in), ls.act);
    case layer_kind::separable: return make_separable_layer(geometry_of(ls, in), ls.units, ls.act);
    case layer_kind::lrn: return make_lrn_layer(in, ls.lrn);
    case layer_kind::embedding: return make_embedding_layer(in, ls);
  }
  return nullptr;
}

} // namespace actorps
