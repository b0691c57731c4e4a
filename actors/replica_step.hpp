// One training step of a WorkerReplica on the batch its model has loaded, behind one interface:
// the whole model computes the step at once (data parallel); a vertical slice computes it with
// the other slices of its group, layer part by layer part (model-parallel, control/slice_sequencer).
// Plain logic over the model: the worker loads the batch, begins the step, hands every received
// layer_part to receive(), and pushes the gradients once the step is ready.
#pragma once

#include "control/step_phase.hpp"
#include "messages/slice_protocol.hpp"
#include "model/replica_model.hpp"

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace actorps {

class backend;

class replica_step {
public:
  using state = step_phase;

  /// send(to, part): deliver part to slice `to` of the group (model-parallel only).
  using send_fn = std::function<void(uint32_t to, layer_part part)>;

  virtual ~replica_step() = default;

  /// The model the step trains: parameters go in, gradients and metrics come out.
  virtual replica_model& model() = 0;

  virtual state status() const = 0;

  /// Starts a step on the loaded batch of `rows` examples and goes as far as it can.
  virtual caf::error begin(int rows) = 0;

  /// Takes another slice's part; fails with protocol_error where the step has no slices.
  virtual caf::error receive(layer_part part) = 0;

  /// After ready: the step is over (its gradients were taken); the next one may begin.
  virtual void end() = 0;

  /// Tells the rest of the group that this worker stops (nothing to tell for a whole model).
  virtual void announce_stop() = 0;

  /// Examples in the step that became ready.
  virtual int rows() const = 0;

  /// Whole model: `ready(first)` is called inside begin() whenever backprop has completed the
  /// gradients of every variable >= first, last layer first (the worker pushes them while the
  /// layers below are computed). A slice never calls it: its gradients are ready with the step.
  using gradients_ready = std::function<void(size_t first)>;
  virtual void on_gradients(gradients_ready) {
  }
};

/// The whole model of spec on be, for batches of up to max_batch rows.
caf::expected<std::unique_ptr<replica_step>> make_whole_step(backend& be, const model_spec& spec, int max_batch,
                                                             uint64_t dropout_seed = 0);

/// Towers (compute.devices): the whole model on each of `devices`; a step splits the batch of up
/// to max_batch rows over them (in device order), computes the towers at once, and its gradient is
/// the towers' average weighted by their rows, summed in device order. Pushes after the average.
caf::expected<std::unique_ptr<replica_step>> make_tower_step(const std::vector<backend*>& devices, const model_spec& spec,
                                                             int max_batch, uint64_t dropout_seed = 0);

/// Slice `slice` of `slices` of spec on be; send reaches the group's other slices. Fails naming
/// the first layer that is not dense (model parallelism splits dense layers only).
caf::expected<std::unique_ptr<replica_step>> make_sliced_step(backend& be, const model_spec& spec, int slice,
                                                              int slices, int max_batch, replica_step::send_fn send);

} // namespace actorps
