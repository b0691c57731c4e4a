// One vertical slice of the MLP (model parallelism): slice k of K holds columns
// slice_columns(units, k, K) of every layer's weights and bias, computes those units' outputs,
// and exchanges with the other slices, layer by layer:
//   forward  - each slice's part of a layer's outputs goes to every slice (an all-gather); the
//              next layer multiplies the parts block by block, so no slice ever holds a whole
//              weight matrix;
//   backward - each slice computes its own weight gradients, and for every slice j the product
//              of its delta with the rows of its weights that read j's units; slice j sums those
//              contributions in slice order (a reduce-scatter) to get its delta.
// The exchange itself is the caller's (WorkerReplica actors send the parts as messages); this
// class only computes. Parameters and gradients are addressed in whole-variable coordinates
// (variable index and offset of the unsplit model), so shards and checkpoints see one model.
#pragma once

#include "compute/backend.hpp"
#include "model/column_split.hpp"
#include "model/loss_meter.hpp"
#include "model/replica_model.hpp"
#include "model/mlp_spec.hpp"

#include <caf/expected.hpp>

#include <memory>
#include <vector>

namespace actorps {

/// Threading: like its backend, used by one thread at a time.
class mlp_slice : public replica_model {
public:
  /// Allocates slice `slice` of `slices` for batches of up to max_batch rows (parameters zero).
  static caf::expected<std::unique_ptr<mlp_slice>> make(backend& be, const mlp_spec& spec, int slice,
                                                        int slices, int max_batch);

  const model_spec& spec() const override { return model_; }
  const mlp_spec& dense() const { return spec_; }
  int slice() const { return k_; }
  int slices() const { return slices_; }
  int rows() const { return rows_; }

  /// Slice j's columns of layer l.
  column_range columns(int l, int j) const { return cols_[l][j]; }

  /// Uploads n values of whole variable var at offset; the range must lie in one row and in
  /// this slice's columns (shape_mismatch otherwise), or anywhere when the slice is the whole
  /// width (K = 1).
  caf::error upload_parameter(size_t var, size_t offset, const float* values, size_t n) override;

  /// Downloads n gradient values of whole variable var at offset (same rule).
  caf::error download_gradient(size_t var, size_t offset, float* out, size_t n) override;

  /// Copies rows examples into the backend. Every slice of a group loads the same batch.
  void load_batch(const float* images, const float* labels, int rows) override;

  /// Computes this slice's part of layer l's outputs (rows x columns(l, slice())) and downloads
  /// it into part. REQUIRES: l == 0, or every slice's part of layer l - 1 accepted.
  caf::error forward(int l, std::vector<float>& part);

  /// Stores slice j's part of layer l's outputs (j == slice() is ignored: forward kept it).
  caf::error accept_part(int l, int j, const float* values, size_t n);

  /// After every part of the logits layer: adds the batch's loss to the metrics and computes
  /// this slice's columns of d(mean loss)/d(logits).
  caf::error begin_backward();

  /// Gradients of layer l's weights and bias (this slice's columns). For l > 0 also the
  /// contributions to d loss / d(outputs of layer l - 1): partials[j] for slice j's columns
  /// (rows x columns(l - 1, j)); this slice's own contribution stays inside.
  /// REQUIRES: this slice's delta of layer l (begin_backward or finish_partials(l)).
  caf::error backward(int l, std::vector<std::vector<float>>& partials);

  /// Stores slice j's contribution to the gradient of layer l's outputs in this slice's columns.
  caf::error accept_partial(int l, int j, const float* values, size_t n);

  /// After every slice's contribution for layer l: sums them in slice order and applies the
  /// activation's derivative: this slice's delta of layer l.
  void finish_partials(int l);

  /// Returns the metrics accumulated since the last call and resets them (waits for the backend).
  caf::expected<batch_metrics> take_metrics() override;

private:
  mlp_slice(backend& be, const mlp_spec& spec, int slice, int slices, int max_batch);
  caf::error allocate_all();
  caf::error local_offset(size_t var, size_t offset, size_t n, size_t& local) const;
  matrix part(int l, int j) const;
  matrix delta(int l) const;
  matrix weights(int l) const;

  backend& be_;
  mlp_spec spec_;
  model_spec model_; // spec_.to_model(): the variables shards and checkpoints see
  int k_;
  int slices_;
  int max_batch_;
  int rows_ = 0;
  std::vector<std::vector<column_range>> cols_; // [layer][slice]
  std::vector<buffer> params_;                  // per variable: this slice's columns
  std::vector<buffer> grads_;
  buffer input_;
  buffer labels_;
  std::vector<std::vector<buffer>> parts_; // [layer][slice]: outputs in that slice's columns
  std::vector<buffer> deltas_;             // [layer]: this slice's delta
  std::vector<buffer> partials_;           // [slice]: contributions to the delta being summed
  buffer scratch_;                         // a contribution on its way to another slice
  buffer logits_;                          // rows x classes, assembled from every slice's part
  buffer logits_grad_;
  std::vector<float> host_logits_;
  std::vector<float> host_grad_;
  loss_meter meter_;
};

} // namespace actorps
