// A layer-list model's forward and backward passes on a compute backend, with its parameters,
// gradients and activations in that backend's memory. Used by the single-process trainer, the
// chief's evaluator and the worker replicas (the whole model).
#pragma once

#include "compute/backend.hpp"
#include "model/layers.hpp"
#include "model/loss_meter.hpp"
#include "model/model_spec.hpp"
#include "model/replica_model.hpp"

#include <caf/expected.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace actorps {

/// Returns the batch size evaluation uses for spec: 1,000 examples, fewer (down to 50) for models
/// whose activations, every layer's held at once (a network allocates them all), would need more
/// than 64 MiB at that size.
int evaluation_batch(const model_spec& spec);

/// Returns the floats one example occupies in a network's activations: its input and every
/// layer's output (a residual block's inner layers' too).
size_t activation_floats_per_example(const model_spec& spec);

/// Threading: like its backend, used by one thread at a time.
class network : public replica_model {
public:
  /// Allocates parameters (zero), gradients and workspace for batches of up to max_batch rows.
  /// Dropout masks derive from dropout_seed and the number of training passes so far.
  static caf::expected<std::unique_ptr<network>> make(backend& be, const model_spec& spec,
                                                      int max_batch, uint64_t dropout_seed = 0);

  const model_spec& spec() const override { return spec_; }
  backend& compute() { return be_; }
  int max_batch() const { return max_batch_; }

  /// The variables' values and gradients in backend memory, in creation order.
  std::vector<buffer>& parameters() {
    settle_table();
    return params_;
  }
  std::vector<buffer>& gradients() { return grads_; }

  /// Uploads every variable from host values in creation order; fails on a size mismatch.
  caf::error set_parameters(const std::vector<std::vector<float>>& values);

  /// Downloads every variable into host vectors (resized) in creation order.
  caf::error get_parameters(std::vector<std::vector<float>>& values);

  /// Downloads every gradient into host vectors (resized) in creation order.
  caf::error get_gradients(std::vector<std::vector<float>>& values);

  /// Uploads n host values into variable k at offset (a slice pulled from a shard).
  /// Fails with shape_mismatch if the range is outside the variable.
  caf::error upload_parameter(size_t k, size_t offset, const float* values, size_t n) override;
  /// Downloads n values of variable k at offset into host memory.
  caf::error download_parameter(size_t k, size_t offset, float* out, size_t n);

  /// Downloads n values of gradient k starting at offset into host memory (not of an embedding
  /// table: its gradient holds the batch's rows, sparse_rows).
  caf::error download_gradient(size_t k, size_t offset, float* out, size_t n) override;
  caf::error download_table_gradient(size_t k, std::vector<size_t>& rows, std::vector<float>& out) override;

  /// On the CPU the embedding's forward reads the table's rows from `values` itself (no copy)
  /// until the next call; the first read or write of the table's values (parameters(),
  /// get_parameters, set_parameters, upload_parameter or download_parameter of it) copies them
  /// in first, so `values` must be unchanged until then (a worker never reads its table back).
  caf::error take_table_rows(size_t k, const float* values, size_t n) override;
  const float* table_gradient_in_place(size_t k, std::vector<size_t>& rows) override;

  /// The rows of variable k the loaded batch's gradient holds when k is an embedding table (its
  /// gradient buffer holds those rows alone, in this order), nullptr for a variable whose
  /// gradient is whole: what an optimizer updates (TF's sparse apply).
  const std::vector<size_t>* sparse_rows(size_t k) const;

  /// Per variable: sparse_rows(k) (for optimizer::apply).
  std::vector<const std::vector<size_t>*> sparse_rows() const;

  /// Copies rows examples (row-major NHWC images, labels as floats) into the backend.
  /// REQUIRES: 0 < rows <= max_batch().
  void load_batch(const float* images, const float* labels, int rows) override;
  /// The embedding's backward then reads its slots' positions from the ids themselves; a batch
  /// with an id at or past `distinct` (which would read past rows taken with take_table_rows) is
  /// looked at as load_batch does.
  void load_renumbered_batch(const float* images, const float* labels, int rows, size_t distinct) override;
  /// As load_batch, for forward(false) and score() alone (evaluations, predictions): the forward
  /// reads an embedding's rows by id, so the rows its gradient would list are not looked for (the
  /// one-time cost of every batch's ids through a hash table). A backward() after it gives the
  /// table no rows.
  void load_eval_batch(const float* images, const float* labels, int rows);
  /// As load_batch, with the rows an embedding's ids touch and each slot's position among them
  /// found ahead (touched_rows on the input pipeline's thread: `table_rows` the rows in the
  /// order first named, `positions` swapped in). A batch without them (`positions` not one per
  /// slot) is looked at as load_batch does.
  void load_collected_batch(const float* images, const float* labels, int rows, const std::vector<uint32_t>& table_rows,
                            std::vector<float>& positions);

  /// The rows of the first layer's embedding table (0: none).
  size_t embedding_table_rows() const {
    return embedding_var_ < 0 ? 0 : static_cast<size_t>(vars_[static_cast<size_t>(embedding_var_)].rows);
  }

  /// Computes the logits of the loaded batch; training applies dropout (a fresh mask per call).
  void forward(bool training);

  /// Told during backward() that the gradients of every variable >= first are complete (after
  /// each layer with variables, the last layer first): what a worker may push already.
  using gradients_ready = std::function<void(size_t first)>;

  /// After forward(true): gradients of the batch's mean loss into gradients(); adds the loss to
  /// the running metrics. `ready` (if set) hears of each layer's gradients as they complete.
  void backward(const gradients_ready& ready = {});

  /// After forward(false): adds the batch's loss and correct predictions to the running metrics.
  void score();

  /// After forward(false): copies the loaded batch's logits (rows x classes, row-major) into out
  /// (resized); what evaluation tools turn into predictions and probabilities.
  caf::error download_logits(std::vector<float>& out);

  /// Returns the metrics accumulated since the last call and resets them (waits for the backend).
  caf::expected<batch_metrics> take_metrics() override;

private:
  network(backend& be, const model_spec& spec, int max_batch, uint64_t dropout_seed);
  caf::error allocate_all();
  const float* layer_input(size_t l) const;
  layer_vars vars_of(size_t l) const;
  matrix logits() const;
  // Copies rows the embedding reads where they lie (take_table_rows) into its variable's values.
  void settle_table();

  backend& be_;
  model_spec spec_;
  std::vector<variable_spec> vars_;
  std::vector<int> first_var_;          // per layer, -1 without variables
  std::vector<size_t> out_sizes_;       // per layer, floats per example
  std::vector<std::unique_ptr<layer>> layers_;
  int max_batch_;
  int rows_ = 0;
  uint64_t dropout_seed_;
  uint64_t passes_ = 0;
  std::vector<buffer> params_;
  std::vector<buffer> grads_;
  std::vector<float*> value_ptrs_; // params_' and grads_' data, what layers get (layer_vars)
  std::vector<float*> grad_ptrs_;
  buffer input_;
  buffer labels_;
  std::vector<buffer> acts_;   // per layer: rows x output size (post-activation)
  buffer delta_[2];            // ping-pong backward buffers, max_batch x widest layer
  loss_meter meter_;
  int embedding_var_ = -1;                    // the first layer's table when it is an embedding
  std::optional<touched_rows> embedding_rows_; // the rows the loaded batch picks from it
  buffer positions_;                           // per slot of the batch: its row's place in them ...
  // ... (positions) or its id, renumbered so (load_renumbered_batch), or no rows listed (load_eval_batch)
  enum class embedding_slots { positions, ids, unlisted } slots_ = embedding_slots::positions;
  size_t table_taken_ = 0; // floats of the table's rows read where they lie (take_table_rows), 0: none
};

} // namespace actorps
