// Forward: h_{l+1} = f(h_l W_l + b_l); backward: dW_l = h_l^T d_l, db_l = sum_rows d_l,
// d_{l-1} = (d_l W_l^T) * f'(h_l).
#include "model/mlp.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <algorithm>

namespace actorps {

mlp::mlp(backend& be, const mlp_spec& spec, int max_batch)
  : be_(be), spec_(spec), vars_(spec.variables()), max_batch_(max_batch) {
}

caf::expected<std::unique_ptr<mlp>> mlp::make(backend& be, const mlp_spec& spec, int max_batch) {
  if (auto why = spec.validate(); !why.empty())
    return caf::make_error(errc::invalid_argument, why);
  if (max_batch <= 0)
    return caf::make_error(errc::invalid_argument, cat("max batch must be positive, got ", max_batch));
  std::unique_ptr<mlp> net{new mlp(be, spec, max_batch)};
  if (auto err = net->allocate_all())
    return err;
  return net;
}

caf::error mlp::allocate_all() {
  auto alloc = [&](size_t n, buffer& out) { return allocate_into(be_, n, out); };
  params_.resize(vars_.size());
  grads_.resize(vars_.size());
  for (size_t i = 0; i < vars_.size(); ++i)
    if (auto err = alloc(vars_[i].size(), params_[i]); err || (err = alloc(vars_[i].size(), grads_[i])))
      return err;
  const size_t batch = static_cast<size_t>(max_batch_);
  int widest = spec_.input_size;
  acts_.resize(spec_.layer_count());
  for (int l = 0; l < spec_.layer_count(); ++l) {
    widest = std::max(widest, spec_.layer_outputs(l));
    if (auto err = alloc(batch * spec_.layer_outputs(l), acts_[l]))
      return err;
  }
  for (auto& d : delta_)
    if (auto err = alloc(batch * widest, d))
      return err;
  if (auto err = alloc(batch * spec_.input_size, input_); err || (err = alloc(batch, labels_)))
    return err;
  return meter_.allocate(be_);
}

caf::error mlp::set_parameters(const std::vector<std::vector<float>>& values) {
  if (values.size() != vars_.size())
    return caf::make_error(errc::shape_mismatch,
                           cat("expected ", vars_.size(), " variables, got ", values.size()));
  for (size_t i = 0; i < vars_.size(); ++i)
    if (values[i].size() != vars_[i].size())
      return caf::make_error(errc::shape_mismatch, cat(vars_[i].name, ": expected ", vars_[i].size(),
                                                       " values, got ", values[i].size()));
  for (size_t i = 0; i < vars_.size(); ++i)
    be_.upload(values[i].data(), values[i].size(), params_[i].data());
  return be_.sync();
}

namespace {

caf::error download_all(backend& be, const std::vector<buffer>& src,
                        std::vector<std::vector<float>>& out) {
  out.resize(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    out[i].resize(src[i].size());
    if (auto err = be.download(src[i].data(), src[i].size(), out[i].data()))
      return err;
  }
  return caf::none;
}

} // namespace

caf::error mlp::get_parameters(std::vector<std::vector<float>>& values) {
  return download_all(be_, params_, values);
}

caf::error mlp::get_gradients(std::vector<std::vector<float>>& values) {
  return download_all(be_, grads_, values);
}

namespace {

caf::error check_range(const std::vector<variable_spec>& vars, size_t k, size_t offset, size_t n) {
  if (k >= vars.size() || offset + n > vars[k].size())
    return caf::make_error(errc::shape_mismatch, cat("variable ", k, " range [", offset, ", ", offset + n,
                                                     ") is outside the model"));
  return caf::none;
}

} // namespace

caf::error mlp::upload_parameter(size_t k, size_t offset, const float* values, size_t n) {
  if (auto err = check_range(vars_, k, offset, n))
    return err;
  be_.upload(values, n, params_[k].data() + offset);
  return caf::none;
}

caf::error mlp::download_gradient(size_t k, size_t offset, float* out, size_t n) {
  if (auto err = check_range(vars_, k, offset, n))
    return err;
  return be_.download(grads_[k].data() + offset, n, out);
}

void mlp::load_batch(const float* images, const float* labels, int rows) {
  rows_ = std::clamp(rows, 0, max_batch_);
  be_.upload(images, static_cast<size_t>(rows_) * spec_.input_size, input_.data());
  be_.upload(labels, static_cast<size_t>(rows_), labels_.data());
}

matrix mlp::layer_input(int l) const {
  return l == 0 ? input_.as_matrix(rows_, spec_.input_size) : activations(l - 1);
}

matrix mlp::activations(int l) const {
  return acts_[l].as_matrix(rows_, spec_.layer_outputs(l));
}

void mlp::forward() {
  for (int l = 0; l < spec_.layer_count(); ++l) {
    matrix out = activations(l);
    be_.gemm(false, false, 1.0f, layer_input(l),
             params_[2 * l].as_matrix(spec_.layer_inputs(l), spec_.layer_outputs(l)), 0.0f, out);
    be_.add_bias(out, params_[2 * l + 1].data());
    if (l + 1 < spec_.layer_count())
      be_.activate(spec_.hidden_activation, out, out);
  }
}

void mlp::backward() {
  const int last = spec_.layer_count() - 1;
  matrix delta = delta_[0].as_matrix(rows_, spec_.classes);
  meter_.train(be_, activations(last), labels_.data(), delta);
  for (int l = last; l >= 0; --l) {
    matrix input = layer_input(l);
    be_.gemm(true, false, 1.0f, input, delta, 0.0f,
             grads_[2 * l].as_matrix(spec_.layer_inputs(l), spec_.layer_outputs(l)));
    be_.sum_rows(delta, grads_[2 * l + 1].data());
    if (l == 0)
      break;
    matrix prev = delta_[(last - l + 1) % 2].as_matrix(rows_, spec_.layer_inputs(l));
    be_.gemm(false, true, 1.0f, delta,
             params_[2 * l].as_matrix(spec_.layer_inputs(l), spec_.layer_outputs(l)), 0.0f, prev);
    be_.activate_backward(spec_.hidden_activation, input, prev, prev);
    delta = prev;
  }
}

void mlp::score() {
  const int last = spec_.layer_count() - 1;
  meter_.score(be_, activations(last), labels_.data(), delta_[0].as_matrix(rows_, spec_.classes));
}

caf::expected<batch_metrics> mlp::take_metrics() {
  return meter_.take(be_);
}

} // namespace actorps
