// One slice's side of a model-parallel step, written once for the WorkerReplica actor
// (actors/replica_step.cpp, its host an mlp_slice) and the simulated worker
// (sim/cluster_slices.cpp): which layer parts it sends to the other slices of its group, which
// it waits for, when its gradients are ready, and how a slice that stops ends the group's step.
// Parts may arrive early (a faster slice already in the next layer or step) or in any order;
// they wait in an inbox. The host computes and sends; the sequencer decides when.
#pragma once

#include "control/step_phase.hpp"
#include "messages/slice_protocol.hpp"

#include <caf/error.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <tuple>
#include <vector>

namespace actorps {

class mlp_slice;

/// A slice's compute and its way to the group. Layers are 0 .. layers-1; forward(l) may run
/// once every part of layer l-1 was accepted; backward(l) once the slice's delta of layer l is
/// complete (begin_backward for the last layer, finish_partials(l) below it).
class slice_host {
public:
  virtual ~slice_host() = default;
  /// This slice's part of layer l's outputs, into `part`.
  virtual caf::error forward(int l, std::vector<float>& part) = 0;
  /// Slice `from`'s part of layer l's outputs (forward) or its contribution to this slice's delta
  /// of layer l (backward).
  virtual caf::error accept(int l, bool backward, uint32_t from, const float* values, size_t n) = 0;
  virtual caf::error begin_backward() = 0;
  /// Layer l's weight gradients; for every slice j, its contribution to j's delta of layer l-1.
  virtual caf::error backward(int l, std::vector<std::vector<float>>& partials) = 0;
  virtual void finish_partials(int l) = 0;
  /// Delivers part to slice `to` of the group.
  virtual void send(uint32_t to, layer_part part) = 0;
};

class slice_sequencer {
public:
  using state = step_phase;

  /// Slice `slice` of a group of `slices`, over a stack of `layers` dense layers.
  slice_sequencer(uint32_t slice, uint32_t slices, int layers, slice_host& host);

  state status() const { return state_; }

  /// The group's step this slice is in (or starts next, when idle).
  uint64_t step() const { return step_; }

  /// Starts the current step on the batch the host has loaded: computes and sends this slice's
  /// part of layer 0, then uses the parts already received. A step at or past one another slice
  /// stops before is not begun (stopped).
  caf::error begin_step();

  /// Takes a part from another slice; while waiting, goes on as far as the parts allow.
  /// Fails with protocol_error for a part from an unknown slice, a duplicate or a past step.
  caf::error receive(layer_part part);

  /// After ready: the next step becomes current (idle).
  void end_step();

  /// Tells every other slice that this one stops before the current step (when idle: the next
  /// one; when inside a step: that step, which the group then drops).
  void announce_stop();

private:
  using key = std::tuple<uint64_t, bool, int32_t>; // step, backward, layer
  caf::error advance();
  caf::error send_forward(int l);
  caf::error run_backward(int l);
  void to_others(const std::function<layer_part(uint32_t to)>& part);

  uint32_t slice_;
  uint32_t slices_;
  int layers_;
  slice_host& host_;
  state state_ = state::idle;
  uint64_t step_ = 0;
  bool backward_ = false;
  int32_t layer_ = 0;
  uint64_t stop_before_ = UINT64_MAX; // the earliest step another slice will not run
  std::map<key, std::vector<layer_part>> inbox_;
  std::vector<float> part_;
  std::vector<std::vector<float>> partials_;
};

/// The host of a real slice: `net` computes, `send` reaches the group.
class mlp_slice_host final : public slice_host {
public:
  using send_fn = std::function<void(uint32_t to, layer_part part)>;
  mlp_slice_host(mlp_slice& net, send_fn send);
  caf::error forward(int l, std::vector<float>& part) override;
  caf::error accept(int l, bool backward, uint32_t from, const float* values, size_t n) override;
  caf::error begin_backward() override;
  caf::error backward(int l, std::vector<std::vector<float>>& partials) override;
  void finish_partials(int l) override;
  void send(uint32_t to, layer_part part) override;

  /// A sequencer for this host's slice.
  slice_sequencer sequencer();

private:
  mlp_slice& net_;
  send_fn send_;
};

} // namespace actorps
