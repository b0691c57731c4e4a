// A model-parallel step: forward layer by layer (send my part, wait for every other part), then
// backward (send my contribution to each slice's delta, wait for theirs), then the gradients.
#include "control/slice_sequencer.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "model/mlp_slice.hpp"

#include <algorithm>

namespace actorps {

slice_sequencer::slice_sequencer(uint32_t slice, uint32_t slices, int layers, slice_host& host)
    : slice_(slice), slices_(slices), layers_(layers), host_(host) {
}

caf::error slice_sequencer::begin_step() {
  if (stop_before_ <= step_) {
    state_ = state::stopped;
    return caf::none;
  }
  state_ = state::waiting;
  if (auto err = send_forward(0))
    return err;
  return advance();
}

caf::error slice_sequencer::receive(layer_part part) {
  if (part.from >= slices_ || part.from == slice_)
    return caf::make_error(errc::protocol_error, cat("slice ", slice_, ": a layer part from slice ", part.from,
                                                     " of a group of ", slices_));
  if (part.layer == layer_part::stop_marker) {
    stop_before_ = std::min(stop_before_, part.step);
    return state_ == state::waiting ? advance() : caf::none;
  }
  if (part.layer < 0 || part.layer >= layers_)
    return caf::make_error(errc::protocol_error, cat("slice ", slice_, ": slice ", part.from, " sent layer ",
                                                     part.layer, " of a stack of ", layers_));
  if (part.step < step_ || (part.step == step_ && state_ == state::ready))
    return caf::make_error(errc::protocol_error, cat("slice ", slice_, ": a part of step ", part.step, " from slice ",
                                                     part.from, " arrived after that step"));
  auto& parts = inbox_[key{part.step, part.backward, part.layer}];
  if (std::any_of(parts.begin(), parts.end(), [&](const layer_part& p) { return p.from == part.from; }))
    return caf::make_error(errc::protocol_error, cat("slice ", slice_, ": slice ", part.from, " sent layer ",
                                                     part.layer, " of step ", part.step, " twice"));
  parts.push_back(std::move(part));
  return state_ == state::waiting ? advance() : caf::none;
}

void slice_sequencer::end_step() {
  ++step_;
  state_ = state::idle;
}

void slice_sequencer::announce_stop() {
  to_others([&](uint32_t) { return layer_part::stop_before(slice_, step_); });
}

void slice_sequencer::to_others(const std::function<layer_part(uint32_t to)>& part) {
  for (uint32_t j = 0; j < slices_; ++j)
    if (j != slice_)
      host_.send(j, part(j));
}

caf::error slice_sequencer::send_forward(int l) {
  if (auto err = host_.forward(l, part_))
    return err;
  to_others([&](uint32_t) { return layer_part::forward_part(slice_, step_, l, tensor_buffer{part_}); });
  backward_ = false;
  layer_ = l;
  return caf::none;
}

caf::error slice_sequencer::run_backward(int l) {
  if (auto err = host_.backward(l, partials_))
    return err;
  if (l == 0) {
    state_ = state::ready;
    return caf::none;
  }
  if (partials_.size() < slices_)
    return caf::make_error(errc::protocol_error, cat("slice ", slice_, ": the backward pass of layer ", l, " gave ",
                                                     partials_.size(), " partials for a group of ", slices_));
  to_others([&](uint32_t j) { return layer_part::backward_part(slice_, step_, l - 1, tensor_buffer{partials_[j]}); });
  backward_ = true;
  layer_ = l - 1;
  return caf::none;
}

caf::error slice_sequencer::advance() {
  const size_t others = slices_ - 1;
  const int last = layers_ - 1;
  while (state_ == state::waiting) {
    if (stop_before_ <= step_) {
      state_ = state::stopped;
      return caf::none;
    }
    auto it = inbox_.find(key{step_, backward_, layer_});
    if (others > 0 && (it == inbox_.end() || it->second.size() < others))
      return caf::none;
    std::vector<layer_part> parts;
    if (it != inbox_.end()) {
      parts = std::move(it->second);
      inbox_.erase(it);
    }
    for (auto& p : parts)
      if (auto err = host_.accept(layer_, backward_, p.from, p.data.values.data(), p.data.values.size()))
        return err;
    caf::error err;
    if (backward_) {
      host_.finish_partials(layer_);
      err = run_backward(layer_);
    } else if (layer_ < last) {
      err = send_forward(layer_ + 1);
    } else {
      err = host_.begin_backward();
      if (!err)
        err = run_backward(last);
    }
    if (err)
      return err;
  }
  return caf::none;
}

mlp_slice_host::mlp_slice_host(mlp_slice& net, send_fn send) : net_(net), send_(std::move(send)) {
}

caf::error mlp_slice_host::forward(int l, std::vector<float>& part) {
  return net_.forward(l, part);
}

caf::error mlp_slice_host::accept(int l, bool backward, uint32_t from, const float* values, size_t n) {
  return backward ? net_.accept_partial(l, static_cast<int>(from), values, n)
                  : net_.accept_part(l, static_cast<int>(from), values, n);
}

caf::error mlp_slice_host::begin_backward() {
  return net_.begin_backward();
}

caf::error mlp_slice_host::backward(int l, std::vector<std::vector<float>>& partials) {
  return net_.backward(l, partials);
}

void mlp_slice_host::finish_partials(int l) {
  net_.finish_partials(l);
}

void mlp_slice_host::send(uint32_t to, layer_part part) {
  send_(to, std::move(part));
}

slice_sequencer mlp_slice_host::sequencer() {
  return slice_sequencer{static_cast<uint32_t>(net_.slice()), static_cast<uint32_t>(net_.slices()),
                         net_.dense().layer_count(), *this};
}

} // namespace actorps
