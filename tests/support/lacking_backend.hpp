// A CPU backend without kernels for some ops, for soft placement's tests: has_kernel() says which,
// and calling one of them anyway records an error (so a wrapper that calls it fails the test).
#pragma once

#include "common/errc.hpp"
#include "common/log.hpp"
#include "compute/cpu_backend.hpp"
#include "compute/forwarding_backend.hpp"
#include "compute/op_errors.hpp"

#include <set>

namespace actorps::test {

struct owned_cpu { // (a base, so the CPU backend exists before forwarding_backend refers to it)
  std::unique_ptr<backend> cpu = make_cpu_backend(1);
};

class lacking_backend : private owned_cpu, public forwarding_backend {
public:
  explicit lacking_backend(std::set<backend_op> lacking) : forwarding_backend(*cpu), lacking_(std::move(lacking)) {}

  /// A backend without any kernel.
  static std::set<backend_op> every_op() { return {std::begin(all_backend_ops), std::end(all_backend_ops)}; }

  std::string name() const override { return "cpu without kernels"; }
  bool has_kernel(backend_op op) const override { return lacking_.count(op) == 0; }
  caf::error sync() override {
    auto err = forwarding_backend::sync();
    auto mine = errors_.take();
    return mine ? std::move(mine) : std::move(err);
  }

#define ACTORPS_LACKING(op, params, args)                                                                            \
  void op params override {                                                                                          \
    if (lacking_.count(backend_op::op))                                                                              \
      return errors_.record(caf::make_error(errc::protocol_error, "lacking_backend: " #op " was called"));           \
    forwarding_backend::op args;                                                                                     \
  }
  ACTORPS_LACKING(gemm, (bool ta, bool tb, float alpha, matrix a, matrix b, float beta, matrix c), (ta, tb, alpha, a, b, beta, c))
  ACTORPS_LACKING(add_bias, (matrix y, const float* bias), (y, bias))
  ACTORPS_LACKING(sum_rows, (matrix x, float* out), (x, out))
  ACTORPS_LACKING(axpy, (size_t n, float alpha, const float* x, float* y), (n, alpha, x, y))
  ACTORPS_LACKING(scale, (size_t n, float alpha, float* x), (n, alpha, x))
  ACTORPS_LACKING(im2col, (const window_geometry& g, int n, const float* x, float* col), (g, n, x, col))
  ACTORPS_LACKING(col2im, (const window_geometry& g, int n, const float* col, float* dx), (g, n, col, dx))
  ACTORPS_LACKING(maxpool, (const window_geometry& g, int n, const float* x, float* y, float* am), (g, n, x, y, am))
  ACTORPS_LACKING(maxpool_backward, (const window_geometry& g, int n, const float* dy, const float* am, float* dx),
                  (g, n, dy, am, dx))
  ACTORPS_LACKING(dropout, (size_t n, float rate, uint64_t seed, const float* x, float* y, float* mask),
                  (n, rate, seed, x, y, mask))
  ACTORPS_LACKING(multiply, (size_t n, const float* a, const float* b, float* out), (n, a, b, out))
  ACTORPS_LACKING(activate, (activation f, matrix x, matrix y), (f, x, y))
  ACTORPS_LACKING(activate_backward, (activation f, matrix y, matrix dy, matrix dx), (f, y, dy, dx))
  ACTORPS_LACKING(softmax_xent, (matrix logits, const float* labels, matrix grad, float* loss), (logits, labels, grad, loss))
  ACTORPS_LACKING(count_correct, (matrix logits, const float* labels, float* count), (logits, labels, count))
  ACTORPS_LACKING(apply_update, (const optimizer_params& p, long t, size_t n, float* w, const float* g, float* s0, float* s1),
                  (p, t, n, w, g, s0, s1))
  ACTORPS_LACKING(channel_moments, (matrix x, float* mean, float* var), (x, mean, var))
  ACTORPS_LACKING(batch_norm, (matrix x, const float* m, const float* v, const float* g, const float* b, float eps, matrix y),
                  (x, m, v, g, b, eps, y))
  ACTORPS_LACKING(batch_norm_backward, (matrix x, matrix dy, const float* m, const float* v, const float* g, float eps,
                                        float* dg, float* db, matrix dx), (x, dy, m, v, g, eps, dg, db, dx))
  ACTORPS_LACKING(depthwise, (const window_geometry& g, int n, const float* x, const float* w, float* y), (g, n, x, w, y))
  ACTORPS_LACKING(depthwise_backward_input, (const window_geometry& g, int n, const float* dy, const float* w, float* dx),
                  (g, n, dy, w, dx))
  ACTORPS_LACKING(depthwise_backward_weights, (const window_geometry& g, int n, const float* x, const float* dy, float* dw),
                  (g, n, x, dy, dw))
  ACTORPS_LACKING(lrn, (matrix x, const lrn_params& p, matrix y), (x, p, y))
  ACTORPS_LACKING(lrn_backward, (matrix x, matrix y, matrix dy, const lrn_params& p, matrix dx), (x, y, dy, p, dx))
#undef ACTORPS_LACKING

private:
  std::set<backend_op> lacking_;
  op_errors errors_;
};

} // namespace actorps::test
