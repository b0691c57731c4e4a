// A backend that hands every call to another one it does not own: the base of backends that
// change a few calls of another (soft placement) and of tests' backends that lack a kernel.
#pragma once

#include "compute/backend.hpp"

namespace actorps {

class forwarding_backend : public backend {
public:
  /// REQUIRES: inner outlives this backend.
  explicit forwarding_backend(backend& inner) : inner_(inner) {}

  std::string name() const override { return inner_.name(); }
  bool is_gpu() const override { return inner_.is_gpu(); }
  memory_use memory() const override { return inner_.memory(); }
  bool has_kernel(backend_op op) const override { return inner_.has_kernel(op); }
  caf::expected<buffer> allocate(size_t n) override { return inner_.allocate(n); }
  void upload(const float* host, size_t n, float* dst) override { inner_.upload(host, n, dst); }
  caf::error download(const float* src, size_t n, float* host) override { return inner_.download(src, n, host); }
  void copy(const float* src, size_t n, float* dst) override { inner_.copy(src, n, dst); }
  caf::error sync() override { return inner_.sync(); }
  void gemm(bool trans_a, bool trans_b, float alpha, matrix a, matrix b, float beta, matrix c) override {
    inner_.gemm(trans_a, trans_b, alpha, a, b, beta, c);
  }
  void add_bias(matrix y, const float* bias) override { inner_.add_bias(y, bias); }
  void sum_rows(matrix x, float* out) override { inner_.sum_rows(x, out); }
  void axpy(size_t n, float alpha, const float* x, float* y) override { inner_.axpy(n, alpha, x, y); }
  void scale(size_t n, float alpha, float* x) override { inner_.scale(n, alpha, x); }
  void im2col(const window_geometry& g, int n, const float* x, float* col) override { inner_.im2col(g, n, x, col); }
  bool direct_conv(const window_geometry& g) const override { return inner_.direct_conv(g); }
  void conv_forward(const window_geometry& g, int n, const float* x, const float* w, int cout, float* y) override {
    inner_.conv_forward(g, n, x, w, cout, y);
  }
  void conv_backward(const window_geometry& g, int n, const float* x, const float* dy, const float* w, int cout,
                     float beta, float* dw, float* dx) override {
    inner_.conv_backward(g, n, x, dy, w, cout, beta, dw, dx);
  }
  void col2im(const window_geometry& g, int n, const float* col, float* dx) override { inner_.col2im(g, n, col, dx); }
  void maxpool(const window_geometry& g, int n, const float* x, float* y, float* argmax) override {
    inner_.maxpool(g, n, x, y, argmax);
  }
  void maxpool_backward(const window_geometry& g, int n, const float* dy, const float* argmax, float* dx) override {
    inner_.maxpool_backward(g, n, dy, argmax, dx);
  }
  void dropout(size_t n, float rate, uint64_t seed, const float* x, float* y, float* mask) override {
    inner_.dropout(n, rate, seed, x, y, mask);
  }
  void multiply(size_t n, const float* a, const float* b, float* out) override { inner_.multiply(n, a, b, out); }
  void activate(activation f, matrix x, matrix y) override { inner_.activate(f, x, y); }
  void activate_backward(activation f, matrix y, matrix dy, matrix dx) override { inner_.activate_backward(f, y, dy, dx); }
  void softmax_xent(matrix logits, const float* labels, matrix grad, float* loss) override {
    inner_.softmax_xent(logits, labels, grad, loss);
  }
  void count_correct(matrix logits, const float* labels, float* count) override {
    inner_.count_correct(logits, labels, count);
  }
  void apply_update(const optimizer_params& p, long t, size_t n, float* w, const float* g, float* slot0,
                    float* slot1) override {
    inner_.apply_update(p, t, n, w, g, slot0, slot1);
  }
  void apply_update_rows(const optimizer_params& p, long t, size_t cols, const size_t* at, size_t count, float* w,
                         const float* g, float* slot0, float* slot1) override {
    inner_.apply_update_rows(p, t, cols, at, count, w, g, slot0, slot1);
  }

  void channel_moments(matrix x, float* mean, float* var) override { inner_.channel_moments(x, mean, var); }
  void batch_norm(matrix x, const float* mean, const float* var, const float* gamma, const float* beta, float eps,
                  matrix y) override {
    inner_.batch_norm(x, mean, var, gamma, beta, eps, y);
  }
  void batch_norm_backward(matrix x, matrix dy, const float* mean, const float* var, const float* gamma, float eps,
                           float* dgamma, float* dbeta, matrix dx) override {
    inner_.batch_norm_backward(x, dy, mean, var, gamma, eps, dgamma, dbeta, dx);
  }

  void depthwise(const window_geometry& g, int n, const float* x, const float* w, float* y) override {
    inner_.depthwise(g, n, x, w, y);
  }
  void depthwise_backward_input(const window_geometry& g, int n, const float* dy, const float* w, float* dx) override {
    inner_.depthwise_backward_input(g, n, dy, w, dx);
  }
  void depthwise_backward_weights(const window_geometry& g, int n, const float* x, const float* dy, float* dw) override {
    inner_.depthwise_backward_weights(g, n, x, dy, dw);
  }

  void lrn(matrix x, const lrn_params& p, matrix y) override { inner_.lrn(x, p, y); }
  void lrn_backward(matrix x, matrix y, matrix dy, const lrn_params& p, matrix dx) override {
    inner_.lrn_backward(x, y, dy, p, dx);
  }

  void embedding_bag(const bag_geometry& g, const float* ids, const float* table, float* out) override {
    inner_.embedding_bag(g, ids, table, out);
  }
  void embedding_bag_backward(const bag_geometry& g, const float* ids, const float* dout, float* dtable) override {
    inner_.embedding_bag_backward(g, ids, dout, dtable);
  }

protected:
  backend& inner() const { return inner_; }

private:
  backend& inner_;
};

} // namespace actorps
