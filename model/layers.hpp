// The layers of a network on a compute backend: each computes its forward pass from its input to
// its output and its backward pass from the gradient of its output, in backend memory. The
// network (model/network.hpp) owns the activations, parameters and gradients; a layer owns only
// its workspace (im2col columns, pooling winners, dropout masks, a block's inner activations).
#pragma once

#include "common/row_places.hpp"
#include "compute/backend.hpp"
#include "model/model_spec.hpp"

#include <caf/error.hpp>

#include <cstdint>
#include <memory>
#include <vector>

namespace actorps {

/// What a layer's passes read and write; pointers are backend memory, rows examples each.
struct layer_io {
  int rows = 0;
  const float* in = nullptr;  ///< rows x input size
  float* out = nullptr;       ///< rows x output size (post-activation)
};

/// A layer's variables in creation order (model_spec::variables()), and their gradients. A
/// batch-norm layer's moving statistics get, in training, the batch's statistics as "gradients":
/// what the shards (or the trainer's optimizer) move them towards.
struct layer_vars {
  float* const* values = nullptr;
  float* const* grads = nullptr;
};

class layer {
public:
  virtual ~layer() = default;

  /// Allocates the workspace for batches of up to max_batch rows.
  virtual caf::error allocate(backend& be, int max_batch) = 0;

  /// Computes io.out from io.in; training enables dropout (its mask derives from seed) and makes
  /// batch normalisation use (and report) the batch's statistics.
  virtual void forward(backend& be, const layer_io& io, const layer_vars& vars, bool training, uint64_t seed) = 0;

  /// From dout (the gradient of the loss w.r.t. io.out; the layer may overwrite it): its
  /// variables' gradients and din (skipped when nullptr: the first layer).
  /// REQUIRES: the layer's latest forward was of this io, in training (layers may keep what it computed).
  virtual void backward(backend& be, const layer_io& io, float* dout, float* din, const layer_vars& vars) = 0;
};

/// The table rows an embedding of table_rows rows reads for a batch of up to max_slots id slots:
/// the rows its backward writes and an optimizer updates, each once, in the order the ids first
/// name them (found through a small hash table: no sort), and for every slot its row's position
/// in that list (the embedding's gradient holds those rows alone, in that order).
class touched_rows {
public:
  touched_rows(size_t table_rows, size_t max_slots);

  /// The rows of a batch of `rows` examples of `tokens` id slots. Ids that already name rows
  /// 0, 1, 2, ... in the order they first appear (a worker's batch, renumbered to its local
  /// table's rows by control/row_exchange) are taken as they are, without the hash table.
  const std::vector<size_t>& collect(const float* slots, int rows, int tokens);

  const std::vector<size_t>& rows() const { return rows_; }

  /// The rows of a batch whose ids name rows 0 .. distinct - 1 in the order they first appear
  /// (renumbered so), taken without looking at them; positions() is then not made (each slot's
  /// position is its id).
  void take_renumbered(size_t distinct);

  /// Per slot of the last batch: its row's position in rows(), as an id (compute/token_ids.hpp),
  /// or an empty slot: what the embedding's backward reads in place of the ids.
  const std::vector<float>& positions() const { return positions_; }

  /// Hands the last batch's positions() over, taking `into`'s buffer for the next collect().
  void give_positions(std::vector<float>& into) { into.swap(positions_); }

  /// The rows and positions a touched_rows of the same table collected from a batch (on the input
  /// pipeline's thread, ahead of the step), as collect() here would have made them; positions is
  /// swapped in (its buffer left for the next batch).
  void adopt(const std::vector<uint32_t>& rows, std::vector<float>& positions);

private:
  // collect() for ids in first-seen order from 0; false (nothing decided) for any other batch.
  bool collect_compact(const float* slots, int rows, int tokens);

  size_t table_rows_;
  row_places places_; // each row's position in rows_
  std::vector<size_t> rows_;
  std::vector<float> positions_;
};

/// The rows an embedding layer's gradient holds at most: the batch's slots (or the table's rows,
/// when fewer), rounded up to a power of two.
size_t embedding_gradient_rows(const layer_spec& ls, const image_shape& in, int max_batch);

/// Makes layer `l` for input shape `in`. REQUIRES: it fits (model_spec::validate() is empty).
std::unique_ptr<layer> make_layer(const layer_spec& l, const image_shape& in);

} // namespace actorps
