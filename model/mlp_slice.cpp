// Slice k's share of forward and backward. With blocks j of the previous layer's units
// (rows r_j of this slice's weights W^k, in x n_k):
//   forward   z^k = sum_j a^j W^k[r_j] + b^k,  a^k = f(z^k)          (a^j: slice j's part)
//   backward  dW^k[r_j] = (a^j)^T d^k,  db^k = sum_rows d^k,
//             contribution to slice j:  d^k (W^k[r_j])^T,  d_prev^j = f'(a^j) * sum_k (...)
#include "model/mlp_slice.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <algorithm>

namespace actorps {

mlp_slice::mlp_slice(backend& be, const mlp_spec& spec, int slice, int slices, int max_batch)
  : be_(be), spec_(spec), model_(spec.to_model()), k_(slice), slices_(slices), max_batch_(max_batch) {
  cols_.resize(spec_.layer_count());
  for (int l = 0; l < spec_.layer_count(); ++l)
    for (int j = 0; j < slices_; ++j)
      cols_[l].push_back(slice_columns(spec_.layer_outputs(l), j, slices_));
}

caf::expected<std::unique_ptr<mlp_slice>> mlp_slice::make(backend& be, const mlp_spec& spec, int slice,
                                                          int slices, int max_batch) {
  if (auto why = spec.validate(); !why.empty())
    return caf::make_error(errc::invalid_argument, why);
  if (auto why = check_split(spec, slices); !why.empty())
    return caf::make_error(errc::invalid_argument, why);
  if (slice < 0 || slice >= slices)
    return caf::make_error(errc::invalid_argument, cat("slice ", slice, " of ", slices, " does not exist"));
  if (max_batch <= 0)
    return caf::make_error(errc::invalid_argument, cat("max batch must be positive, got ", max_batch));
  std::unique_ptr<mlp_slice> net{new mlp_slice(be, spec, slice, slices, max_batch)};
  if (auto err = net->allocate_all())
    return err;
  return net;
}

caf::error mlp_slice::allocate_all() {
  auto alloc = [&](size_t n, buffer& out) { return allocate_into(be_, n, out); };
  const size_t batch = static_cast<size_t>(max_batch_);
  const int layers = spec_.layer_count();
  params_.resize(2 * layers);
  grads_.resize(2 * layers);
  parts_.resize(layers);
  deltas_.resize(layers);
  int widest = 0;
  for (int l = 0; l < layers; ++l) {
    size_t own = static_cast<size_t>(cols_[l][k_].size());
    size_t weights = static_cast<size_t>(spec_.layer_inputs(l)) * own;
    for (auto* set : {&params_, &grads_})
      if (auto err = alloc(weights, (*set)[2 * l]); err || (err = alloc(own, (*set)[2 * l + 1])))
        return err;
    parts_[l].resize(slices_);
    for (int j = 0; j < slices_; ++j) {
      widest = std::max(widest, cols_[l][j].size());
      if (auto err = alloc(batch * cols_[l][j].size(), parts_[l][j]))
        return err;
    }
    if (auto err = alloc(batch * own, deltas_[l]))
      return err;
  }
  partials_.resize(slices_);
  for (auto& p : partials_)
    if (auto err = alloc(batch * widest, p))
      return err;
  if (auto err = alloc(batch * widest, scratch_))
    return err;
  const size_t logits = batch * spec_.classes;
  if (auto err = alloc(logits, logits_); err || (err = alloc(logits, logits_grad_)))
    return err;
  host_logits_.resize(logits);
  host_grad_.resize(logits);
  if (auto err = alloc(batch * spec_.input_size, input_); err || (err = alloc(batch, labels_)))
    return err;
  return meter_.allocate(be_);
}

caf::error mlp_slice::local_offset(size_t var, size_t offset, size_t n, size_t& local) const {
  const int l = static_cast<int>(var / 2);
  if (var >= params_.size())
    return caf::make_error(errc::shape_mismatch, cat("variable ", var, " is not part of the model"));
  const size_t units = static_cast<size_t>(spec_.layer_outputs(l));
  const size_t rows = var % 2 == 0 ? static_cast<size_t>(spec_.layer_inputs(l)) : 1;
  const size_t row = offset / units, col = offset % units;
  const auto own = cols_[l][k_];
  if (static_cast<size_t>(own.size()) == units && offset + n <= rows * units) { // the whole width (K = 1)
    local = offset;
    return caf::none;
  }
  if (row >= rows || col < static_cast<size_t>(own.begin) || col + n > static_cast<size_t>(own.end))
    return caf::make_error(errc::shape_mismatch, cat("variable ", var, " range [", offset, ", ", offset + n,
                                                     ") is not in slice ", k_, "'s columns [", own.begin, ", ",
                                                     own.end, ") of one row"));
  local = row * static_cast<size_t>(own.size()) + (col - static_cast<size_t>(own.begin));
  return caf::none;
}

caf::error mlp_slice::upload_parameter(size_t var, size_t offset, const float* values, size_t n) {
  size_t local = 0;
  if (auto err = local_offset(var, offset, n, local))
    return err;
  be_.upload(values, n, params_[var].data() + local);
  return caf::none;
}

caf::error mlp_slice::download_gradient(size_t var, size_t offset, float* out, size_t n) {
  size_t local = 0;
  if (auto err = local_offset(var, offset, n, local))
    return err;
  return be_.download(grads_[var].data() + local, n, out);
}

void mlp_slice::load_batch(const float* images, const float* labels, int rows) {
  rows_ = std::clamp(rows, 0, max_batch_);
  be_.upload(images, static_cast<size_t>(rows_) * spec_.input_size, input_.data());
  be_.upload(labels, static_cast<size_t>(rows_), labels_.data());
}

matrix mlp_slice::part(int l, int j) const {
  return parts_[l][j].as_matrix(rows_, cols_[l][j].size());
}

matrix mlp_slice::delta(int l) const {
  return deltas_[l].as_matrix(rows_, cols_[l][k_].size());
}

matrix mlp_slice::weights(int l) const {
  return params_[2 * l].as_matrix(spec_.layer_inputs(l), cols_[l][k_].size());
}

namespace {

// Copies a rows x n block into columns [first, first + n) of a rows x width host matrix.
void place_columns(const float* block, int rows, int n, int first, int width, float* dst) {
  for (int r = 0; r < rows; ++r)
    std::copy(block + static_cast<size_t>(r) * n, block + static_cast<size_t>(r + 1) * n,
              dst + static_cast<size_t>(r) * width + first);
}

caf::error check_size(const char* what, int l, int j, size_t got, size_t want) {
  if (got == want)
    return caf::none;
  return caf::make_error(errc::shape_mismatch, cat(what, " of layer ", l, " from slice ", j, " has ", got,
                                                   " values, expected ", want));
}

} // namespace

caf::error mlp_slice::forward(int l, std::vector<float>& out) {
  matrix z = part(l, k_);
  if (l == 0) {
    be_.gemm(false, false, 1.0f, input_.as_matrix(rows_, spec_.input_size), weights(0), 0.0f, z);
  } else {
    matrix w = weights(l);
    for (int j = 0; j < slices_; ++j)
      be_.gemm(false, false, 1.0f, part(l - 1, j), w.row_range(cols_[l - 1][j].begin, cols_[l - 1][j].size()),
               j == 0 ? 0.0f : 1.0f, z);
  }
  be_.add_bias(z, params_[2 * l + 1].data());
  const bool logits = l + 1 == spec_.layer_count();
  if (!logits)
    be_.activate(spec_.hidden_activation, z, z);
  out.resize(z.size());
  if (auto err = be_.download(z.data, z.size(), out.data()))
    return err;
  if (logits)
    place_columns(out.data(), rows_, z.cols, cols_[l][k_].begin, spec_.classes, host_logits_.data());
  return caf::none;
}

caf::error mlp_slice::accept_part(int l, int j, const float* values, size_t n) {
  if (j == k_)
    return caf::none;
  if (auto err = check_size("the outputs", l, j, n, part(l, j).size()))
    return err;
  if (l + 1 == spec_.layer_count())
    place_columns(values, rows_, cols_[l][j].size(), cols_[l][j].begin, spec_.classes, host_logits_.data());
  else
    be_.upload(values, n, parts_[l][j].data());
  return caf::none;
}

caf::error mlp_slice::begin_backward() {
  const int last = spec_.layer_count() - 1;
  const size_t n = static_cast<size_t>(rows_) * spec_.classes;
  be_.upload(host_logits_.data(), n, logits_.data());
  matrix grad = logits_grad_.as_matrix(rows_, spec_.classes);
  meter_.train(be_, logits_.as_matrix(rows_, spec_.classes), labels_.data(), grad);
  if (auto err = be_.download(grad.data, n, host_grad_.data()))
    return err;
  // this slice's columns of the logits' gradient, packed rows x n_k
  auto own = cols_[last][k_];
  std::vector<float> packed(static_cast<size_t>(rows_) * own.size());
  for (int r = 0; r < rows_; ++r)
    std::copy(host_grad_.begin() + static_cast<size_t>(r) * spec_.classes + own.begin,
              host_grad_.begin() + static_cast<size_t>(r) * spec_.classes + own.end,
              packed.begin() + static_cast<size_t>(r) * own.size());
  be_.upload(packed.data(), packed.size(), deltas_[last].data());
  return caf::none;
}

caf::error mlp_slice::backward(int l, std::vector<std::vector<float>>& partials) {
  matrix d = delta(l);
  matrix dw = grads_[2 * l].as_matrix(spec_.layer_inputs(l), d.cols);
  if (l == 0) {
    be_.gemm(true, false, 1.0f, input_.as_matrix(rows_, spec_.input_size), d, 0.0f, dw);
  } else {
    for (int j = 0; j < slices_; ++j)
      be_.gemm(true, false, 1.0f, part(l - 1, j), d, 0.0f,
               dw.row_range(cols_[l - 1][j].begin, cols_[l - 1][j].size()));
  }
  be_.sum_rows(d, grads_[2 * l + 1].data());
  partials.resize(slices_);
  if (l == 0)
    return caf::none;
  matrix w = weights(l);
  for (int j = 0; j < slices_; ++j) {
    auto prev = cols_[l - 1][j];
    matrix out = (j == k_ ? partials_[k_] : scratch_).as_matrix(rows_, prev.size());
    be_.gemm(false, true, 1.0f, d, w.row_range(prev.begin, prev.size()), 0.0f, out);
    if (j == k_) {
      partials[j].clear();
      continue;
    }
    partials[j].resize(out.size());
    if (auto err = be_.download(out.data, out.size(), partials[j].data()))
      return err;
  }
  return caf::none;
}

caf::error mlp_slice::accept_partial(int l, int j, const float* values, size_t n) {
  if (j == k_)
    return caf::none;
  if (auto err = check_size("the gradient contribution", l, j, n, delta(l).size()))
    return err;
  be_.upload(values, n, partials_[j].data());
  return caf::none;
}

void mlp_slice::finish_partials(int l) {
  matrix d = delta(l);
  be_.copy(partials_[0].data(), d.size(), d.data);
  for (int j = 1; j < slices_; ++j)
    be_.axpy(d.size(), 1.0f, partials_[j].data(), d.data);
  be_.activate_backward(spec_.hidden_activation, part(l, k_), d, d);
}

caf::expected<batch_metrics> mlp_slice::take_metrics() {
  return meter_.take(be_);
}

} // namespace actorps
