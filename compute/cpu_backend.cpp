// CPU backend: matrix products in avx512_sgemm (one thread, CPUs with AVX-512) or cblas_sgemm,
// vectorisable loops for everything else.
#include "compute/cpu_backend.hpp"

#include "common/page_blocks.hpp"

#include "compute/avx512_gemm.hpp"
#include "compute/batch_norm_ops.hpp"
#include "compute/direct_conv.hpp"
#include "compute/embedding_ops.hpp"
#include "compute/lrn_ops.hpp"
#include "compute/window_ops.hpp"
#include "compute/dropout_mask.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "compute/fast_math.hpp"
#include "compute/op_errors.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>

extern "C" void openblas_set_num_threads(int num_threads);

namespace actorps {

namespace {

// Whether one-thread products run in avx512_sgemm: on CPUs that have AVX-512, unless
// ACTORPS_GEMM=openblas asks for OpenBLAS (benchmarks compare the two).
bool own_gemm() {
  static const bool own = [] {
    const char* choice = std::getenv("ACTORPS_GEMM");
    return avx512_gemm_available() && (choice == nullptr || std::strcmp(choice, "openblas") != 0);
  }();
  return own;
}

// Convolutions of fewer input channels stay on im2col: a window row of k_w * channels floats is
// too short a product for the direct convolution's k_h products to pay (cnn's first layer).
constexpr int direct_conv_min_channels = 8;

ACTORPS_VECTOR_CLONES
void activate_loop(activation f, size_t n, const float* in, float* out) {
  switch (f) {
    case activation::relu:
      for (size_t i = 0; i < n; ++i)
        out[i] = in[i] > 0.0f ? in[i] : 0.0f;
      break;
    case activation::elu:
      for (size_t i = 0; i < n; ++i) {
        float v = in[i];
        float e = detail::fast_exp(v < 0.0f ? v : 0.0f) - 1.0f;
        out[i] = v > 0.0f ? v : e;
      }
      break;
    case activation::sigmoid:
      for (size_t i = 0; i < n; ++i)
        out[i] = 1.0f / (1.0f + detail::fast_exp(-in[i]));
      break;
    case activation::tanh:
      for (size_t i = 0; i < n; ++i)
        out[i] = 1.0f - 2.0f / (detail::fast_exp(2.0f * in[i]) + 1.0f);
      break;
    case activation::leaky_relu:
      for (size_t i = 0; i < n; ++i)
        out[i] = in[i] > 0.0f ? in[i] : leaky_relu_alpha * in[i];
      break;
  }
}

ACTORPS_VECTOR_CLONES
void activate_backward_loop(activation f, size_t n, const float* out, const float* g, float* d) {
  switch (f) {
    case activation::relu:
      for (size_t i = 0; i < n; ++i)
        d[i] = out[i] > 0.0f ? g[i] : 0.0f;
      break;
    case activation::elu:
      for (size_t i = 0; i < n; ++i)
        d[i] = g[i] * (out[i] > 0.0f ? 1.0f : out[i] + 1.0f);
      break;
    case activation::sigmoid:
      for (size_t i = 0; i < n; ++i)
        d[i] = g[i] * out[i] * (1.0f - out[i]);
      break;
    case activation::tanh:
      for (size_t i = 0; i < n; ++i)
        d[i] = g[i] * (1.0f - out[i] * out[i]);
      break;
    case activation::leaky_relu:
      for (size_t i = 0; i < n; ++i)
        d[i] = out[i] > 0.0f ? g[i] : leaky_relu_alpha * g[i];
      break;
  }
}

ACTORPS_VECTOR_CLONES
void dropout_loop(size_t n, float rate, uint64_t seed, const float* x, float* y, float* mask) {
  for (size_t i = 0; i < n; ++i) {
    float m = dropout_keep_scale(seed, i, rate);
    mask[i] = m;
    y[i] = x[i] * m;
  }
}

// y's rows (rows x cols) each plus bias.
ACTORPS_VECTOR_CLONES
void add_bias_loop(int rows, int cols, const float* bias, float* y) {
  for (int i = 0; i < rows; ++i) {
    float* row = y + static_cast<size_t>(i) * cols;
    for (int j = 0; j < cols; ++j)
      row[j] += bias[j];
  }
}

// out = the sum of x's rows (rows x cols), row after row.
ACTORPS_VECTOR_CLONES
void sum_rows_loop(int rows, int cols, const float* x, float* out) {
  std::fill(out, out + cols, 0.0f);
  for (int i = 0; i < rows; ++i) {
    const float* row = x + static_cast<size_t>(i) * cols;
    for (int j = 0; j < cols; ++j)
      out[j] += row[j];
  }
}

ACTORPS_VECTOR_CLONES
void axpy_loop(size_t n, float alpha, const float* x, float* y) {
  for (size_t i = 0; i < n; ++i)
    y[i] += alpha * x[i];
}

ACTORPS_VECTOR_CLONES
void multiply_loop(size_t n, const float* a, const float* b, float* out) {
  for (size_t i = 0; i < n; ++i)
    out[i] = a[i] * b[i];
}

class cpu_backend final : public backend {
public:
  explicit cpu_backend(int threads) : threads_(std::max(1, threads)) {
    openblas_set_num_threads(threads_);
  }

  std::string name() const override {
    return cat("cpu (", threads_ == 1 && own_gemm() ? "AVX-512 sgemm" : "OpenBLAS", ", ", threads_,
               threads_ == 1 ? " thread)" : " threads)");
  }

  bool is_gpu() const override {
    return false;
  }

  memory_use memory() const override {
    return meter_.use();
  }

  caf::expected<buffer> allocate(size_t n) override {
    size_t bytes = std::max<size_t>(64, (n * sizeof(float) + 63) / 64 * 64);
    auto* p = static_cast<float*>(allocate_block(bytes)); // (zeroed; a table on 2 MiB pages)
    if (p == nullptr)
      return caf::make_error(errc::out_of_memory, cat("cpu: cannot allocate ", bytes, " bytes"));
    meter_.took(bytes);
    return buffer{p, n, [this, bytes](float* ptr) {
                    free_block(ptr, bytes);
                    meter_.gave_back(bytes);
                  }};
  }

  void upload(const float* host, size_t n, float* dst) override {
    std::memcpy(dst, host, n * sizeof(float));
  }

  caf::error download(const float* src, size_t n, float* host) override {
    std::memcpy(host, src, n * sizeof(float));
    return sync();
  }

  void copy(const float* src, size_t n, float* dst) override {
    std::memmove(dst, src, n * sizeof(float));
  }

  caf::error sync() override {
    return errors_.take();
  }

  void gemm(bool trans_a, bool trans_b, float alpha, matrix a, matrix b, float beta,
            matrix c) override {
    if (!errors_.gemm_fits(trans_a, trans_b, a, b, c))
      return;
    const int k = inner_dimension(trans_a, a);
    if (threads_ == 1 && own_gemm()) {
      avx512_sgemm(trans_a, trans_b, c.rows, c.cols, k, alpha, a.data, a.cols, b.data, b.cols, beta, c.data, c.cols);
      return;
    }
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, c.rows, c.cols, k, alpha, a.data, a.cols,
                b.data, b.cols, beta, c.data, c.cols);
  }

  void add_bias(matrix y, const float* bias) override { add_bias_loop(y.rows, y.cols, bias, y.data); }

  void sum_rows(matrix x, float* out) override { sum_rows_loop(x.rows, x.cols, x.data, out); }

  void axpy(size_t n, float alpha, const float* x, float* y) override { axpy_loop(n, alpha, x, y); }

  void scale(size_t n, float alpha, float* x) override {
    for (size_t i = 0; i < n; ++i)
      x[i] *= alpha;
  }

  void im2col(const window_geometry& g, int n, const float* x, float* col) override {
    if (errors_.geometry_valid("im2col", g))
      im2col_host(g, n, x, col);
  }

  void col2im(const window_geometry& g, int n, const float* col, float* dx) override {
    if (errors_.geometry_valid("col2im", g))
      col2im_host(g, n, col, dx);
  }

  bool direct_conv(const window_geometry& g) const override {
    return threads_ == 1 && own_gemm() && g.valid() && g.channels >= direct_conv_min_channels;
  }

  void conv_forward(const window_geometry& g, int n, const float* x, const float* w, int cout, float* y) override {
    if (errors_.direct_conv_runs("conv_forward", g, direct_conv(g)))
      metered([&] { conv_.forward(g, n, x, w, cout, y); });
  }

  void conv_backward(const window_geometry& g, int n, const float* x, const float* dy, const float* w, int cout,
                     float beta, float* dw, float* dx) override {
    if (errors_.direct_conv_runs("conv_backward", g, direct_conv(g)))
      metered([&] { conv_.backward(g, n, x, dy, w, cout, beta, dw, dx); });
  }

  void maxpool(const window_geometry& g, int n, const float* x, float* y, float* argmax) override {
    if (errors_.geometry_valid("maxpool", g))
      maxpool_host(g, n, x, y, argmax);
  }

  void maxpool_backward(const window_geometry& g, int n, const float* dy, const float* argmax,
                        float* dx) override {
    if (errors_.geometry_valid("maxpool_backward", g))
      maxpool_backward_host(g, n, dy, argmax, dx);
  }

  void dropout(size_t n, float rate, uint64_t seed, const float* x, float* y, float* mask) override {
    if (errors_.rate_valid("dropout", rate))
      dropout_loop(n, rate, seed, x, y, mask);
  }

  void multiply(size_t n, const float* a, const float* b, float* out) override {
    multiply_loop(n, a, b, out);
  }

  void activate(activation f, matrix x, matrix y) override {
    if (errors_.same_shape("activate", x, y))
      activate_loop(f, x.size(), x.data, y.data);
  }

  void activate_backward(activation f, matrix y, matrix dy, matrix dx) override {
    if (errors_.same_shape("activate_backward", y, dy) && errors_.same_shape("activate_backward", dy, dx))
      activate_backward_loop(f, y.size(), y.data, dy.data, dx.data);
  }

  void softmax_xent(matrix logits, const float* labels, matrix grad, float* loss) override {
    if (!errors_.same_shape("softmax_xent", logits, grad) || !labels_valid("softmax_xent", logits, labels))
      return;
    double total = 0.0;
    const float inv_rows = 1.0f / static_cast<float>(logits.rows);
    for (int i = 0; i < logits.rows; ++i) {
      const float* z = logits.data + static_cast<size_t>(i) * logits.cols;
      float* g = grad.data + static_cast<size_t>(i) * grad.cols;
      float zmax = *std::max_element(z, z + logits.cols);
      float sum = 0.0f;
      for (int j = 0; j < logits.cols; ++j) {
        g[j] = std::exp(z[j] - zmax);
        sum += g[j];
      }
      auto label = static_cast<int>(labels[i]);
      total += std::log(sum) - (z[label] - zmax);
      const float inv_sum = 1.0f / sum;
      for (int j = 0; j < logits.cols; ++j)
        g[j] = (g[j] * inv_sum - (j == label ? 1.0f : 0.0f)) * inv_rows;
    }
    *loss = static_cast<float>(total / logits.rows);
  }

  void count_correct(matrix logits, const float* labels, float* count) override {
    if (!labels_valid("count_correct", logits, labels))
      return;
    int correct = 0;
    for (int i = 0; i < logits.rows; ++i) {
      const float* z = logits.data + static_cast<size_t>(i) * logits.cols;
      auto best = std::max_element(z, z + logits.cols) - z;
      correct += best == static_cast<int>(labels[i]) ? 1 : 0;
    }
    *count = static_cast<float>(correct);
  }

  void apply_update(const optimizer_params& p, long t, size_t n, float* w, const float* g,
                    float* slot0, float* slot1) override {
    apply_update_host(p, t, n, w, g, slot0, slot1);
  }

  void apply_update_rows(const optimizer_params& p, long t, size_t cols, const size_t* at, size_t count, float* w,
                         const float* g, float* slot0, float* slot1) override {
    apply_rows_host(p, t, cols, at, count, w, g, slot0, slot1);
  }

  void depthwise(const window_geometry& g, int n, const float* x, const float* w, float* y) override {
    if (errors_.geometry_valid("depthwise", g))
      depthwise_host(g, n, x, w, y);
  }

  void depthwise_backward_input(const window_geometry& g, int n, const float* dy, const float* w, float* dx) override {
    if (errors_.geometry_valid("depthwise_backward_input", g))
      depthwise_backward_input_host(g, n, dy, w, dx);
  }

  void depthwise_backward_weights(const window_geometry& g, int n, const float* x, const float* dy, float* dw) override {
    if (errors_.geometry_valid("depthwise_backward_weights", g))
      depthwise_backward_weights_host(g, n, x, dy, dw);
  }

  void lrn(matrix x, const lrn_params& p, matrix y) override {
    if (errors_.same_shape("lrn", x, y))
      lrn_host(x.data, x.rows, x.cols, p, y.data);
  }

  void lrn_backward(matrix x, matrix y, matrix dy, const lrn_params& p, matrix dx) override {
    if (errors_.same_shape("lrn_backward", x, y) && errors_.same_shape("lrn_backward", y, dy) &&
        errors_.same_shape("lrn_backward", dy, dx))
      lrn_backward_host(x.data, y.data, dy.data, x.rows, x.cols, p, dx.data);
  }

  void embedding_bag(const bag_geometry& g, const float* ids, const float* table, float* out) override {
    embedding_bag_host(g, ids, table, out);
  }

  void embedding_bag_backward(const bag_geometry& g, const float* ids, const float* dout, float* dtable) override {
    embedding_bag_backward_host(g, ids, dout, dtable);
  }

  void channel_moments(matrix x, float* mean, float* var) override {
    channel_moments_host(x.data, x.rows, x.cols, mean, var);
  }

  void batch_norm(matrix x, const float* mean, const float* var, const float* gamma, const float* beta, float eps,
                  matrix y) override {
    if (errors_.same_shape("batch_norm", x, y))
      batch_norm_host(x.data, x.rows, x.cols, mean, var, gamma, beta, eps, y.data);
  }

  void batch_norm_backward(matrix x, matrix dy, const float* mean, const float* var, const float* gamma, float eps,
                           float* dgamma, float* dbeta, matrix dx) override {
    if (errors_.same_shape("batch_norm_backward", x, dy) && errors_.same_shape("batch_norm_backward", dy, dx))
      batch_norm_backward_host(x.data, dy.data, x.rows, x.cols, mean, var, gamma, eps, dgamma, dbeta, dx.data);
  }

private:
  // Runs the direct convolution's op and counts what its scratch grew or shrank by.
  template <class Op>
  void metered(Op op) {
    const size_t before = conv_.bytes();
    op();
    const size_t after = conv_.bytes();
    if (after > before)
      meter_.took(after - before);
    else
      meter_.gave_back(before - after);
  }

  bool labels_valid(const char* op, matrix logits, const float* labels) {
    for (int i = 0; i < logits.rows; ++i) {
      auto label = static_cast<int>(labels[i]);
      if (label < 0 || label >= logits.cols || static_cast<float>(label) != labels[i]) {
        errors_.record(caf::make_error(errc::invalid_argument,
                               cat(op, ": label ", labels[i], " of row ", i, " is not a class in [0, ",
                                   logits.cols, ")")));
        return false;
      }
    }
    return true;
  }

  int threads_;
  op_errors errors_;
  memory_meter meter_;
  actorps::direct_conv conv_;
};

} // namespace

std::unique_ptr<backend> make_cpu_backend(int threads) {
  return std::make_unique<cpu_backend>(threads);
}

} // namespace actorps
