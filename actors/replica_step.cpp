// The two implementations of a worker's step: the whole model, and one slice of a group.
#include "actors/replica_step.hpp"

#include "common/errc.hpp"
#include "control/slice_sequencer.hpp"
#include "common/log.hpp"
#include "model/network.hpp"
#include "model/mlp_slice.hpp"

namespace actorps {

namespace {

// Forward and backward at once: ready as soon as it begins.
class whole_step : public replica_step {
public:
  explicit whole_step(std::unique_ptr<network> net) : net_(std::move(net)) {
  }
  replica_model& model() override {
    return *net_;
  }
  state status() const override {
    return state_;
  }
  caf::error begin(int rows) override {
    net_->forward(true);
    net_->backward(ready_);
    rows_ = rows;
    state_ = state::ready;
    return caf::none;
  }
  caf::error receive(layer_part part) override {
    return caf::make_error(errc::protocol_error,
                           cat("a layer part from slice ", part.from, " reached a worker that trains the whole model"));
  }
  void end() override {
    state_ = state::idle;
  }
  void announce_stop() override {
  }
  int rows() const override {
    return rows_;
  }
  void on_gradients(gradients_ready ready) override {
    ready_ = std::move(ready);
  }

private:
  std::unique_ptr<network> net_;
  gradients_ready ready_;
  state state_ = state::idle;
  int rows_ = 0;
};

// One slice: the sequencer decides when the step's gradients are ready.
class sliced_step : public replica_step {
public:
  sliced_step(std::unique_ptr<mlp_slice> net, send_fn send)
      : net_(std::move(net)), host_(*net_, std::move(send)), sequencer_(host_.sequencer()) {
  }
  replica_model& model() override {
    return *net_;
  }
  state status() const override {
    return sequencer_.status();
  }
  caf::error begin(int) override {
    return sequencer_.begin_step();
  }
  caf::error receive(layer_part part) override {
    return sequencer_.receive(std::move(part));
  }
  void end() override {
    sequencer_.end_step();
  }
  void announce_stop() override {
    sequencer_.announce_stop();
  }
  int rows() const override {
    return net_->rows();
  }

private:
  std::unique_ptr<mlp_slice> net_;
  mlp_slice_host host_;
  slice_sequencer sequencer_;
};

} // namespace

caf::expected<std::unique_ptr<replica_step>> make_whole_step(backend& be, const model_spec& spec, int max_batch,
                                                             uint64_t dropout_seed) {
  auto net = network::make(be, spec, max_batch, dropout_seed);
  if (!net)
    return std::move(net.error());
  return std::unique_ptr<replica_step>{new whole_step(std::move(*net))};
}

caf::expected<std::unique_ptr<replica_step>> make_sliced_step(backend& be, const model_spec& spec, int slice,
                                                              int slices, int max_batch, replica_step::send_fn send) {
  auto dense = dense_stack(spec);
  if (!dense)
    return std::move(dense.error());
  auto net = mlp_slice::make(be, *dense, slice, slices, max_batch);
  if (!net)
    return std::move(net.error());
  return std::unique_ptr<replica_step>{new sliced_step(std::move(*net), std::move(send))};
}

} // namespace actorps
