// One slice's side of a model-parallel step: which layer parts it sends to the other slices of
// its group, which it waits for, and when its gradients are ready. Parts may arrive early (a
// faster slice already in the next layer or step) or in any order; they wait in an inbox.
// Plain logic over an mlp_slice: the WorkerReplica sends what `send` is given and hands every
// received layer_part to receive().
#pragma once

#include "messages/slice_protocol.hpp"
#include "model/mlp_slice.hpp"

#include <caf/error.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <tuple>
#include <vector>

namespace actorps {

class slice_exchange {
public:
  /// idle: between steps; waiting: for parts of the current step; ready: the step's gradients
  /// are in the model; stopped: another slice stopped before the current step (drop it).
  enum class state { idle, waiting, ready, stopped };

  /// send(to, part): deliver part to slice `to` of the group.
  using send_fn = std::function<void(uint32_t to, layer_part part)>;

  slice_exchange(mlp_slice& net, send_fn send);

  state status() const { return state_; }

  /// The group's step this slice is in (or starts next, when idle).
  uint64_t step() const { return step_; }

  /// Starts the current step on the batch the model has loaded: computes and sends this slice's
  /// part of layer 0, then uses the parts already received.
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

  mlp_slice& net_;
  send_fn send_;
  state state_ = state::idle;
  uint64_t step_ = 0;
  bool backward_ = false;
  int32_t layer_ = 0;
  uint64_t stop_before_ = UINT64_MAX; // the earliest step another slice will not run
  std::map<key, std::vector<layer_part>> inbox_;
  std::vector<float> part_;
  std::vector<std::vector<float>> partials_;
};

} // namespace actorps
