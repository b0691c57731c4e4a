// What a WorkerReplica needs of its model, whole (mlp) or one vertical slice (mlp_slice):
// parameters and gradients addressed in whole-variable coordinates, batches and metrics.
#pragma once

#include "model/loss_meter.hpp"
#include "model/model_spec.hpp"

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <cstddef>
#include <vector>

namespace actorps {

class replica_model {
public:
  virtual ~replica_model() = default;

  /// The whole model's shape (a slice answers with the unsplit model).
  virtual const model_spec& spec() const = 0;

  /// Uploads n host values into variable var at offset (a range pulled from a shard).
  virtual caf::error upload_parameter(size_t var, size_t offset, const float* values, size_t n) = 0;

  /// Downloads n values of variable var's gradient at offset into host memory.
  virtual caf::error download_gradient(size_t var, size_t offset, float* out, size_t n) = 0;

  /// An embedding table's gradient: `rows` gets the table rows the loaded batch touched (the
  /// order its gradient holds them), `out` their rows.size() x cols values. Fails with
  /// invalid_argument for a variable that is not an embedding table.
  virtual caf::error download_table_gradient(size_t var, std::vector<size_t>& rows, std::vector<float>& out);

  /// An embedding table's rows for the steps to come: its first n values (a worker's local
  /// table: its batch's rows, by local row). A model in host memory reads them where they lie,
  /// so they must stay valid and unchanged until the next call or upload_parameter; others
  /// copy them (upload_parameter, what this does unless overridden).
  virtual caf::error take_table_rows(size_t var, const float* values, size_t n) {
    return upload_parameter(var, 0, values, n);
  }

  /// download_table_gradient's values where they lie in host memory, valid until the next step
  /// computes (`rows` gets their rows); nullptr where they do not (download them then).
  virtual const float* table_gradient_in_place(size_t /*var*/, std::vector<size_t>& /*rows*/) { return nullptr; }

  /// Copies rows examples (row-major images, labels as floats) into the backend.
  virtual void load_batch(const float* images, const float* labels, int rows) = 0;

  /// load_batch for a batch whose ids already name an embedding table's rows 0 .. distinct - 1
  /// in the order they first appear (a worker's batch, renumbered to its local table's rows by
  /// control/row_exchange): a model may take them as they are without looking at each id.
  virtual void load_renumbered_batch(const float* images, const float* labels, int rows, size_t /*distinct*/) {
    load_batch(images, labels, rows);
  }

  /// Returns the metrics accumulated since the last call and resets them.
  virtual caf::expected<batch_metrics> take_metrics() = 0;
};

} // namespace actorps
