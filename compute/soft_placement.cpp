// Soft placement: the ops a device lacks, staged through the host onto a CPU backend.
#include "compute/soft_placement.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "compute/cpu_backend.hpp"
#include "compute/forwarding_backend.hpp"
#include "compute/op_errors.hpp"

#include <array>

namespace actorps {

namespace {

constexpr size_t op_count = sizeof(all_backend_ops) / sizeof(all_backend_ops[0]);
constexpr size_t max_operands = 8; // (batch_norm_backward's)

// One operand of an op in the device's memory: n floats at `at` (nullptr: an absent slot), read
// by the op, and written back when `written`.
struct operand {
  const float* at;
  size_t n;
  bool written;
};

class soft_placed final : public forwarding_backend {
public:
  soft_placed(std::unique_ptr<backend> device, int cpu_threads, std::string who)
    : forwarding_backend(*device), device_(std::move(device)), cpu_(make_cpu_backend(cpu_threads)), who_(std::move(who)) {
    for (size_t i = 0; i < op_count; ++i)
      on_cpu_[i] = !device_->has_kernel(all_backend_ops[i]);
  }

  std::string name() const override { return cat(device_->name(), " + soft placement on ", cpu_->name()); }
  bool has_kernel(backend_op) const override { return true; }

  caf::error sync() override {
    auto err = device_->sync();
    auto mine = errors_.take();
    return mine ? std::move(mine) : std::move(err);
  }

  void gemm(bool trans_a, bool trans_b, float alpha, matrix a, matrix b, float beta, matrix c) override {
    if (!lacks(backend_op::gemm))
      return device_->gemm(trans_a, trans_b, alpha, a, b, beta, c);
    run(backend_op::gemm, {{a.data, a.size(), false}, {b.data, b.size(), false}, {c.data, c.size(), true}},
        [&](float** p) { cpu_->gemm(trans_a, trans_b, alpha, like(a, p[0]), like(b, p[1]), beta, like(c, p[2])); });
  }
  void add_bias(matrix y, const float* bias) override {
    if (!lacks(backend_op::add_bias))
      return device_->add_bias(y, bias);
    run(backend_op::add_bias, {{y.data, y.size(), true}, {bias, cols(y), false}},
        [&](float** p) { cpu_->add_bias(like(y, p[0]), p[1]); });
  }
  void sum_rows(matrix x, float* out) override {
    if (!lacks(backend_op::sum_rows))
      return device_->sum_rows(x, out);
    run(backend_op::sum_rows, {{x.data, x.size(), false}, {out, cols(x), true}},
        [&](float** p) { cpu_->sum_rows(like(x, p[0]), p[1]); });
  }
  void axpy(size_t n, float alpha, const float* x, float* y) override {
    if (!lacks(backend_op::axpy))
      return device_->axpy(n, alpha, x, y);
    run(backend_op::axpy, {{x, n, false}, {y, n, true}}, [&](float** p) { cpu_->axpy(n, alpha, p[0], p[1]); });
  }
  void scale(size_t n, float alpha, float* x) override {
    if (!lacks(backend_op::scale))
      return device_->scale(n, alpha, x);
    run(backend_op::scale, {{x, n, true}}, [&](float** p) { cpu_->scale(n, alpha, p[0]); });
  }
  void im2col(const window_geometry& g, int n, const float* x, float* col) override {
    if (!lacks(backend_op::im2col))
      return device_->im2col(g, n, x, col);
    run(backend_op::im2col, {{x, inputs(g, n), false}, {col, columns(g, n), true}},
        [&](float** p) { cpu_->im2col(g, n, p[0], p[1]); });
  }
  void col2im(const window_geometry& g, int n, const float* col, float* dx) override {
    if (!lacks(backend_op::col2im))
      return device_->col2im(g, n, col, dx);
    run(backend_op::col2im, {{col, columns(g, n), false}, {dx, inputs(g, n), true}},
        [&](float** p) { cpu_->col2im(g, n, p[0], p[1]); });
  }
  void maxpool(const window_geometry& g, int n, const float* x, float* y, float* argmax) override {
    if (!lacks(backend_op::maxpool))
      return device_->maxpool(g, n, x, y, argmax);
    run(backend_op::maxpool, {{x, inputs(g, n), false}, {y, pooled(g, n), true}, {argmax, pooled(g, n), true}},
        [&](float** p) { cpu_->maxpool(g, n, p[0], p[1], p[2]); });
  }
  void maxpool_backward(const window_geometry& g, int n, const float* dy, const float* argmax, float* dx) override {
    if (!lacks(backend_op::maxpool_backward))
      return device_->maxpool_backward(g, n, dy, argmax, dx);
    run(backend_op::maxpool_backward, {{dy, pooled(g, n), false}, {argmax, pooled(g, n), false}, {dx, inputs(g, n), true}},
        [&](float** p) { cpu_->maxpool_backward(g, n, p[0], p[1], p[2]); });
  }
  void dropout(size_t n, float rate, uint64_t seed, const float* x, float* y, float* mask) override {
    if (!lacks(backend_op::dropout))
      return device_->dropout(n, rate, seed, x, y, mask);
    run(backend_op::dropout, {{x, n, false}, {y, n, true}, {mask, n, true}},
        [&](float** p) { cpu_->dropout(n, rate, seed, p[0], p[1], p[2]); });
  }
  void multiply(size_t n, const float* a, const float* b, float* out) override {
    if (!lacks(backend_op::multiply))
      return device_->multiply(n, a, b, out);
    run(backend_op::multiply, {{a, n, false}, {b, n, false}, {out, n, true}},
        [&](float** p) { cpu_->multiply(n, p[0], p[1], p[2]); });
  }
  void activate(activation f, matrix x, matrix y) override {
    if (!lacks(backend_op::activate))
      return device_->activate(f, x, y);
    run(backend_op::activate, {{x.data, x.size(), false}, {y.data, y.size(), true}},
        [&](float** p) { cpu_->activate(f, like(x, p[0]), like(y, p[1])); });
  }
  void activate_backward(activation f, matrix y, matrix dy, matrix dx) override {
    if (!lacks(backend_op::activate_backward))
      return device_->activate_backward(f, y, dy, dx);
    run(backend_op::activate_backward, {{y.data, y.size(), false}, {dy.data, dy.size(), false}, {dx.data, dx.size(), true}},
        [&](float** p) { cpu_->activate_backward(f, like(y, p[0]), like(dy, p[1]), like(dx, p[2])); });
  }
  void softmax_xent(matrix logits, const float* labels, matrix grad, float* loss) override {
    if (!lacks(backend_op::softmax_xent))
      return device_->softmax_xent(logits, labels, grad, loss);
    run(backend_op::softmax_xent,
        {{logits.data, logits.size(), false}, {labels, rows(logits), false}, {grad.data, grad.size(), true}, {loss, 1, true}},
        [&](float** p) { cpu_->softmax_xent(like(logits, p[0]), p[1], like(grad, p[2]), p[3]); });
  }
  void count_correct(matrix logits, const float* labels, float* count) override {
    if (!lacks(backend_op::count_correct))
      return device_->count_correct(logits, labels, count);
    run(backend_op::count_correct, {{logits.data, logits.size(), false}, {labels, rows(logits), false}, {count, 1, true}},
        [&](float** p) { cpu_->count_correct(like(logits, p[0]), p[1], p[2]); });
  }
  void apply_update(const optimizer_params& opt, long t, size_t n, float* w, const float* g, float* slot0,
                    float* slot1) override {
    if (!lacks(backend_op::apply_update))
      return device_->apply_update(opt, t, n, w, g, slot0, slot1);
    run(backend_op::apply_update, {{w, n, true}, {g, n, false}, {slot0, n, true}, {slot1, n, true}},
        [&](float** p) { cpu_->apply_update(opt, t, n, p[0], p[1], p[2], p[3]); });
  }
  void apply_update_rows(const optimizer_params& opt, long t, size_t cols, const size_t* at, size_t count, float* w,
                         const float* g, float* slot0, float* slot1) override {
    if (!lacks(backend_op::apply_update))
      return device_->apply_update_rows(opt, t, cols, at, count, w, g, slot0, slot1);
    backend::apply_update_rows(opt, t, cols, at, count, w, g, slot0, slot1); // (row by row, each on the CPU)
  }

  void channel_moments(matrix x, float* mean, float* var) override {
    if (!lacks(backend_op::channel_moments))
      return device_->channel_moments(x, mean, var);
    run(backend_op::channel_moments, {{x.data, x.size(), false}, {mean, cols(x), true}, {var, cols(x), true}},
        [&](float** p) { cpu_->channel_moments(like(x, p[0]), p[1], p[2]); });
  }
  void batch_norm(matrix x, const float* mean, const float* var, const float* gamma, const float* beta, float eps,
                  matrix y) override {
    if (!lacks(backend_op::batch_norm))
      return device_->batch_norm(x, mean, var, gamma, beta, eps, y);
    run(backend_op::batch_norm,
        {{x.data, x.size(), false}, {mean, cols(x), false}, {var, cols(x), false}, {gamma, cols(x), false},
         {beta, cols(x), false}, {y.data, y.size(), true}},
        [&](float** p) { cpu_->batch_norm(like(x, p[0]), p[1], p[2], p[3], p[4], eps, like(y, p[5])); });
  }
  void batch_norm_backward(matrix x, matrix dy, const float* mean, const float* var, const float* gamma, float eps,
                           float* dgamma, float* dbeta, matrix dx) override {
    if (!lacks(backend_op::batch_norm_backward))
      return device_->batch_norm_backward(x, dy, mean, var, gamma, eps, dgamma, dbeta, dx);
    run(backend_op::batch_norm_backward,
        {{x.data, x.size(), false}, {dy.data, dy.size(), false}, {mean, cols(x), false}, {var, cols(x), false},
         {gamma, cols(x), false}, {dgamma, cols(x), true}, {dbeta, cols(x), true}, {dx.data, dx.size(), true}},
        [&](float** p) { cpu_->batch_norm_backward(like(x, p[0]), like(dy, p[1]), p[2], p[3], p[4], eps, p[5], p[6], like(dx, p[7])); });
  }

  void depthwise(const window_geometry& g, int n, const float* x, const float* w, float* y) override {
    if (!lacks(backend_op::depthwise))
      return device_->depthwise(g, n, x, w, y);
    run(backend_op::depthwise, {{x, inputs(g, n), false}, {w, filters(g), false}, {y, pooled(g, n), true}},
        [&](float** p) { cpu_->depthwise(g, n, p[0], p[1], p[2]); });
  }
  void depthwise_backward_input(const window_geometry& g, int n, const float* dy, const float* w, float* dx) override {
    if (!lacks(backend_op::depthwise_backward_input))
      return device_->depthwise_backward_input(g, n, dy, w, dx);
    run(backend_op::depthwise_backward_input, {{dy, pooled(g, n), false}, {w, filters(g), false}, {dx, inputs(g, n), true}},
        [&](float** p) { cpu_->depthwise_backward_input(g, n, p[0], p[1], p[2]); });
  }
  void depthwise_backward_weights(const window_geometry& g, int n, const float* x, const float* dy, float* dw) override {
    if (!lacks(backend_op::depthwise_backward_weights))
      return device_->depthwise_backward_weights(g, n, x, dy, dw);
    run(backend_op::depthwise_backward_weights, {{x, inputs(g, n), false}, {dy, pooled(g, n), false}, {dw, filters(g), true}},
        [&](float** p) { cpu_->depthwise_backward_weights(g, n, p[0], p[1], p[2]); });
  }

  void lrn(matrix x, const lrn_params& lp, matrix y) override {
    if (!lacks(backend_op::lrn))
      return device_->lrn(x, lp, y);
    run(backend_op::lrn, {{x.data, x.size(), false}, {y.data, y.size(), true}},
        [&](float** p) { cpu_->lrn(like(x, p[0]), lp, like(y, p[1])); });
  }
  void lrn_backward(matrix x, matrix y, matrix dy, const lrn_params& lp, matrix dx) override {
    if (!lacks(backend_op::lrn_backward))
      return device_->lrn_backward(x, y, dy, lp, dx);
    run(backend_op::lrn_backward,
        {{x.data, x.size(), false}, {y.data, y.size(), false}, {dy.data, dy.size(), false}, {dx.data, dx.size(), true}},
        [&](float** p) { cpu_->lrn_backward(like(x, p[0]), like(y, p[1]), like(dy, p[2]), lp, like(dx, p[3])); });
  }

  void embedding_bag(const bag_geometry& g, const float* ids, const float* table, float* out) override {
    if (!lacks(backend_op::embedding_bag))
      return device_->embedding_bag(g, ids, table, out);
    run(backend_op::embedding_bag, {{ids, slots(g), false}, {table, table_floats(g), false}, {out, bag_out(g), true}},
        [&](float** p) { cpu_->embedding_bag(g, p[0], p[1], p[2]); });
  }
  void embedding_bag_backward(const bag_geometry& g, const float* ids, const float* dout, float* dtable) override {
    if (!lacks(backend_op::embedding_bag_backward))
      return device_->embedding_bag_backward(g, ids, dout, dtable);
    run(backend_op::embedding_bag_backward,
        {{ids, slots(g), false}, {dout, bag_out(g), false}, {dtable, table_floats(g), true}},
        [&](float** p) { cpu_->embedding_bag_backward(g, p[0], p[1], p[2]); });
  }

private:
  static size_t slots(const bag_geometry& g) { return count(g.rows) * count(g.tokens); }
  static size_t table_floats(const bag_geometry& g) { return count(g.table_rows) * count(g.dim); }
  static size_t bag_out(const bag_geometry& g) { return count(g.rows) * count(g.dim); }
  static size_t filters(const window_geometry& g) { return count(g.k_h) * count(g.k_w) * count(g.channels); }
  static matrix like(matrix m, float* data) { return {data, m.rows, m.cols}; }
  static size_t rows(matrix m) { return static_cast<size_t>(std::max(m.rows, 0)); }
  static size_t cols(matrix m) { return static_cast<size_t>(std::max(m.cols, 0)); }
  static size_t count(int n) { return static_cast<size_t>(std::max(n, 0)); }
  static size_t inputs(const window_geometry& g, int n) { return count(n) * g.in_size(); }
  static size_t columns(const window_geometry& g, int n) {
    return count(n) * count(g.positions()) * count(g.window_size());
  }
  static size_t pooled(const window_geometry& g, int n) { return count(n) * count(g.positions()) * count(g.channels); }

  bool lacks(backend_op op) const { return on_cpu_[static_cast<size_t>(op)]; }

  // Copies the operands to the host, runs compute on the CPU backend with their host copies (in
  // order; nullptr for an absent one), and copies the written ones back.
  template <class Compute>
  void run(backend_op op, std::initializer_list<operand> operands, Compute compute) {
    auto& said = announced_[static_cast<size_t>(op)];
    if (!said) {
      said = true;
      log_line(who_, cat("soft placement: ", device_->name(), " has no kernel for ", to_string(op), "; it runs on ",
                         cpu_->name()));
    }
    std::array<std::vector<float>, max_operands> host;
    std::array<float*, max_operands> at{};
    size_t i = 0;
    for (auto& o : operands) {
      if (o.at != nullptr) {
        host[i].resize(o.n);
        if (auto err = device_->download(o.at, o.n, host[i].data()))
          return errors_.record(std::move(err));
        at[i] = host[i].data();
      }
      ++i;
    }
    compute(at.data());
    if (auto err = cpu_->sync())
      return errors_.record(std::move(err));
    i = 0;
    for (auto& o : operands) {
      if (o.at != nullptr && o.written)
        device_->upload(at[i], o.n, const_cast<float*>(o.at));
      ++i;
    }
  }

  std::unique_ptr<backend> device_;
  std::unique_ptr<backend> cpu_;
  std::string who_;
  std::array<bool, op_count> on_cpu_{};
  std::array<bool, op_count> announced_{};
  op_errors errors_;
};

} // namespace

std::vector<backend_op> missing_kernels(const backend& be) {
  std::vector<backend_op> out;
  for (auto op : all_backend_ops)
    if (!be.has_kernel(op))
      out.push_back(op);
  return out;
}

caf::expected<std::unique_ptr<backend>> place_softly(std::unique_ptr<backend> device, bool soft, int cpu_threads,
                                                     const std::string& who) {
  auto missing = missing_kernels(*device);
  if (missing.empty())
    return device;
  if (!soft) {
    std::vector<std::string> names;
    for (auto op : missing)
      names.push_back(to_string(op));
    return caf::make_error(errc::invalid_config, cat("compute.soft-placement = false but ", device->name(),
                                                     " has no kernel for ", join(names, ", ")));
  }
  return std::unique_ptr<backend>{new soft_placed(std::move(device), cpu_threads, who)};
}

} // namespace actorps
