// Forward: each layer reads the previous layer's output (the input for layer 0); backward walks
// the layers in reverse with two ping-pong gradient buffers; the first layer computes no input
// gradient.
#include "model/network.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "compute/denormals.hpp"
#include "compute/dropout_mask.hpp"
#include "compute/token_ids.hpp"

#include <algorithm>

namespace actorps {

namespace {

// Floats per example of every output of layers (a residual block's inner layers' too) from in.
size_t activation_floats(const std::vector<layer_spec>& layers, image_shape in) {
  size_t total = 0;
  for (auto& l : layers) {
    if (l.kind == layer_kind::residual)
      total += activation_floats(l.body, in);
    in = output_shape(l, in);
    total += in.size();
  }
  return total;
}

} // namespace

size_t activation_floats_per_example(const model_spec& spec) {
  return spec.input.size() + activation_floats(spec.layers, spec.input);
}

int evaluation_batch(const model_spec& spec) {
  const size_t per_example = activation_floats_per_example(spec);
  return static_cast<int>(std::clamp<size_t>((size_t{1} << 24) / per_example, 50, 1000));
}

network::network(backend& be, const model_spec& spec, int max_batch, uint64_t dropout_seed)
  : be_(be), spec_(spec), vars_(spec.variables()), first_var_(spec.first_variable()),
    max_batch_(max_batch), dropout_seed_(dropout_seed) {
  for (auto& shape : spec.output_shapes())
    out_sizes_.push_back(shape.size());
  image_shape in = spec.input;
  for (auto& l : spec.layers) {
    layers_.push_back(make_layer(l, in));
    in = output_shape(l, in);
  }
  if (!spec.layers.empty() && spec.layers.front().kind == layer_kind::embedding) {
    embedding_var_ = first_var_.front();
    embedding_rows_.emplace(static_cast<size_t>(vars_[static_cast<size_t>(embedding_var_)].rows),
                            static_cast<size_t>(max_batch) * spec.input.size());
  }
}

caf::expected<std::unique_ptr<network>> network::make(backend& be, const model_spec& spec,
                                                      int max_batch, uint64_t dropout_seed) {
  if (auto why = spec.validate(); !why.empty())
    return caf::make_error(errc::invalid_argument, why);
  if (max_batch <= 0)
    return caf::make_error(errc::invalid_argument, cat("max batch must be positive, got ", max_batch));
  std::unique_ptr<network> net{new network(be, spec, max_batch, dropout_seed)};
  if (auto err = net->allocate_all())
    return err;
  return net;
}

caf::error network::allocate_all() {
  auto alloc = [&](size_t n, buffer& out) { return allocate_into(be_, n, out); };
  params_.resize(vars_.size());
  grads_.resize(vars_.size());
  for (size_t i = 0; i < vars_.size(); ++i) {
    // an embedding table's gradient: only the rows a batch touches (touched_rows)
    const size_t grad_size = static_cast<int>(i) == embedding_var_
                               ? embedding_gradient_rows(spec_.layers.front(), spec_.input, max_batch_)
                                   * static_cast<size_t>(vars_[i].cols)
                               : vars_[i].size();
    if (auto err = alloc(vars_[i].size(), params_[i]); err || (err = alloc(grad_size, grads_[i])))
      return err;
  }
  if (embedding_var_ >= 0)
    if (auto err = alloc(static_cast<size_t>(max_batch_) * spec_.input.size(), positions_))
      return err;
  for (size_t i = 0; i < vars_.size(); ++i) {
    value_ptrs_.push_back(params_[i].data());
    grad_ptrs_.push_back(grads_[i].data());
  }
  const size_t batch = static_cast<size_t>(max_batch_);
  size_t widest = spec_.input.size();
  acts_.resize(layers_.size());
  for (size_t l = 0; l < layers_.size(); ++l) {
    widest = std::max(widest, out_sizes_[l]);
    if (auto err = alloc(batch * out_sizes_[l], acts_[l]))
      return err;
    if (auto err = layers_[l]->allocate(be_, max_batch_))
      return err;
  }
  for (auto& d : delta_)
    if (auto err = alloc(batch * widest, d))
      return err;
  if (auto err = alloc(batch * spec_.input.size(), input_); err || (err = alloc(batch, labels_)))
    return err;
  return meter_.allocate(be_);
}

caf::error network::set_parameters(const std::vector<std::vector<float>>& values) {
  settle_table();
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

caf::error check_range(const std::vector<variable_spec>& vars, size_t k, size_t offset, size_t n) {
  if (k >= vars.size() || offset + n > vars[k].size())
    return caf::make_error(errc::shape_mismatch, cat("variable ", k, " range [", offset, ", ", offset + n,
                                                     ") is outside the model"));
  return caf::none;
}

} // namespace

caf::error network::get_parameters(std::vector<std::vector<float>>& values) {
  settle_table();
  return download_all(be_, params_, values);
}

caf::error network::get_gradients(std::vector<std::vector<float>>& values) {
  return download_all(be_, grads_, values);
}

caf::error network::upload_parameter(size_t k, size_t offset, const float* values, size_t n) {
  if (auto err = check_range(vars_, k, offset, n))
    return err;
  if (static_cast<int>(k) == embedding_var_)
    settle_table();
  be_.upload(values, n, params_[k].data() + offset);
  return caf::none;
}

caf::error network::take_table_rows(size_t k, const float* values, size_t n) {
  if (static_cast<int>(k) != embedding_var_ || be_.is_gpu())
    return upload_parameter(k, 0, values, n);
  if (auto err = check_range(vars_, k, 0, n))
    return err;
  value_ptrs_[k] = const_cast<float*>(values); // (read alone: the embedding's forward)
  table_taken_ = n;
  return caf::none;
}

void network::settle_table() {
  if (table_taken_ == 0)
    return;
  const auto k = static_cast<size_t>(embedding_var_);
  be_.upload(value_ptrs_[k], table_taken_, params_[k].data());
  value_ptrs_[k] = params_[k].data();
  table_taken_ = 0;
}

caf::error network::download_parameter(size_t k, size_t offset, float* out, size_t n) {
  if (auto err = check_range(vars_, k, offset, n))
    return err;
  if (static_cast<int>(k) == embedding_var_)
    settle_table();
  return be_.download(params_[k].data() + offset, n, out);
}

caf::error network::download_gradient(size_t k, size_t offset, float* out, size_t n) {
  if (auto err = check_range(vars_, k, offset, n))
    return err;
  if (static_cast<int>(k) == embedding_var_)
    return caf::make_error(errc::invalid_argument, cat(vars_[k].name, ": an embedding's gradient holds the batch's rows "
                                                       "alone (sparse_rows), not a range of the table"));
  return be_.download(grads_[k].data() + offset, n, out);
}

caf::error network::download_table_gradient(size_t k, std::vector<size_t>& rows, std::vector<float>& out) {
  if (static_cast<int>(k) != embedding_var_)
    return replica_model::download_table_gradient(k, rows, out);
  rows = embedding_rows_->rows();
  out.resize(rows.size() * static_cast<size_t>(vars_[k].cols));
  return be_.download(grads_[k].data(), out.size(), out.data());
}

const float* network::table_gradient_in_place(size_t k, std::vector<size_t>& rows) {
  if (static_cast<int>(k) != embedding_var_ || be_.is_gpu())
    return nullptr;
  rows = embedding_rows_->rows();
  return grads_[k].data();
}

const std::vector<size_t>* network::sparse_rows(size_t k) const {
  return static_cast<int>(k) == embedding_var_ ? &embedding_rows_->rows() : nullptr;
}

std::vector<const std::vector<size_t>*> network::sparse_rows() const {
  std::vector<const std::vector<size_t>*> out;
  for (size_t k = 0; k < vars_.size(); ++k)
    out.push_back(sparse_rows(k));
  return out;
}

void network::load_batch(const float* images, const float* labels, int rows) {
  rows_ = std::clamp(rows, 0, max_batch_);
  slots_ = embedding_slots::positions;
  if (embedding_rows_) {
    embedding_rows_->collect(images, rows_, static_cast<int>(spec_.input.size()));
    be_.upload(embedding_rows_->positions().data(), embedding_rows_->positions().size(), positions_.data());
  }
  be_.upload(images, static_cast<size_t>(rows_) * spec_.input.size(), input_.data());
  be_.upload(labels, static_cast<size_t>(rows_), labels_.data());
}

void network::load_renumbered_batch(const float* images, const float* labels, int rows, size_t distinct) {
  const size_t slots = static_cast<size_t>(std::clamp(rows, 0, max_batch_)) * spec_.input.size();
  if (!embedding_rows_ || !ids_below(images, slots, distinct)) // (an id past them: looked at, as any batch)
    return load_batch(images, labels, rows);
  rows_ = std::clamp(rows, 0, max_batch_);
  embedding_rows_->take_renumbered(distinct);
  slots_ = embedding_slots::ids; // (a slot's row is its id: the gradient's rows are 0 .. distinct - 1)
  be_.upload(images, static_cast<size_t>(rows_) * spec_.input.size(), input_.data());
  be_.upload(labels, static_cast<size_t>(rows_), labels_.data());
}

void network::load_collected_batch(const float* images, const float* labels, int rows,
                                   const std::vector<uint32_t>& table_rows, std::vector<float>& positions) {
  const int kept = std::clamp(rows, 0, max_batch_);
  const size_t slots = static_cast<size_t>(kept) * spec_.input.size();
  if (!embedding_rows_ || positions.size() != slots)
    return load_batch(images, labels, rows);
  rows_ = kept;
  slots_ = embedding_slots::positions;
  embedding_rows_->adopt(table_rows, positions);
  be_.upload(embedding_rows_->positions().data(), embedding_rows_->positions().size(), positions_.data());
  be_.upload(images, slots, input_.data());
  be_.upload(labels, static_cast<size_t>(rows_), labels_.data());
}

void network::load_eval_batch(const float* images, const float* labels, int rows) {
  rows_ = std::clamp(rows, 0, max_batch_);
  if (embedding_rows_) {
    embedding_rows_->take_renumbered(0); // (none listed: a backward after it moves no row)
    slots_ = embedding_slots::unlisted;
  }
  be_.upload(images, static_cast<size_t>(rows_) * spec_.input.size(), input_.data());
  be_.upload(labels, static_cast<size_t>(rows_), labels_.data());
}

layer_vars network::vars_of(size_t l) const {
  const auto first = static_cast<size_t>(std::max(first_var_[l], 0));
  return {value_ptrs_.data() + first, grad_ptrs_.data() + first};
}

const float* network::layer_input(size_t l) const {
  return l == 0 ? input_.data() : acts_[l - 1].data();
}

matrix network::logits() const {
  return acts_.back().as_matrix(rows_, spec_.classes());
}

void network::forward(bool training) {
  denormals_flushed flushed;
  const uint64_t seed = training ? mix64(dropout_seed_ ^ mix64(++passes_)) : 0;
  for (size_t l = 0; l < layers_.size(); ++l) {
    layers_[l]->forward(be_, {rows_, layer_input(l), acts_[l].data()}, vars_of(l), training, mix64(seed + l));
  }
}

void network::backward(const gradients_ready& ready) {
  denormals_flushed flushed;
  float* delta = delta_[0].data();
  meter_.train(be_, logits(), labels_.data(), {delta, rows_, spec_.classes()});
  for (size_t l = layers_.size(); l-- > 0;) {
    float* din = l == 0 ? nullptr : delta_[(layers_.size() - l) % 2].data();
    int v = first_var_[l];
    const bool table = l == 0 && embedding_rows_;
    const float* in = table && slots_ == embedding_slots::positions ? positions_.data() // (the embedding: slot positions)
                                                                     : layer_input(l);
    if (!(table && slots_ == embedding_slots::unlisted)) // (no rows for its gradient)
      layers_[l]->backward(be_, {rows_, in, acts_[l].data()}, delta, din, vars_of(l));
    delta = din;
    if (ready && v >= 0)
      ready(static_cast<size_t>(v));
  }
}

void network::score() {
  meter_.score(be_, logits(), labels_.data(), delta_[0].as_matrix(rows_, spec_.classes()));
}

caf::error network::download_logits(std::vector<float>& out) {
  auto m = logits();
  out.resize(m.size());
  return be_.download(m.data, m.size(), out.data());
}

caf::expected<batch_metrics> network::take_metrics() {
  return meter_.take(be_);
}

} // namespace actorps
