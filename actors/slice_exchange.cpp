// A model-parallel step: forward layer by layer (send my part, wait for every other part), then
// backward (send my contribution to each slice's delta, wait for theirs), then the gradients.
#include "actors/slice_exchange.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <algorithm>

namespace actorps {

slice_exchange::slice_exchange(mlp_slice& net, send_fn send) : net_(net), send_(std::move(send)) {
}

caf::error slice_exchange::begin_step() {
  if (stop_before_ <= step_) {
    state_ = state::stopped;
    return caf::none;
  }
  state_ = state::waiting;
  if (auto err = send_forward(0))
    return err;
  return advance();
}

caf::error slice_exchange::receive(layer_part part) {
  const auto slices = static_cast<uint32_t>(net_.slices());
  if (part.from >= slices || part.from == static_cast<uint32_t>(net_.slice()))
    return caf::make_error(errc::protocol_error, cat("slice ", net_.slice(), ": a layer part from slice ",
                                                     part.from, " of a group of ", slices));
  if (part.layer == layer_part::stop_marker) {
    stop_before_ = std::min(stop_before_, part.step);
    return state_ == state::waiting ? advance() : caf::none;
  }
  if (part.step < step_ || (part.step == step_ && state_ == state::ready))
    return caf::make_error(errc::protocol_error, cat("slice ", net_.slice(), ": a part of step ", part.step,
                                                     " from slice ", part.from, " arrived after that step"));
  auto& parts = inbox_[key{part.step, part.backward, part.layer}];
  if (std::any_of(parts.begin(), parts.end(), [&](const layer_part& p) { return p.from == part.from; }))
    return caf::make_error(errc::protocol_error, cat("slice ", net_.slice(), ": slice ", part.from,
                                                     " sent layer ", part.layer, " of step ", part.step, " twice"));
  parts.push_back(std::move(part));
  return state_ == state::waiting ? advance() : caf::none;
}

void slice_exchange::end_step() {
  ++step_;
  state_ = state::idle;
}

void slice_exchange::announce_stop() {
  for (uint32_t j = 0; j < static_cast<uint32_t>(net_.slices()); ++j)
    if (j != static_cast<uint32_t>(net_.slice()))
      send_(j, layer_part{static_cast<uint32_t>(net_.slice()), step_, layer_part::stop_marker, false, {}});
}

caf::error slice_exchange::send_forward(int l) {
  if (auto err = net_.forward(l, part_))
    return err;
  for (uint32_t j = 0; j < static_cast<uint32_t>(net_.slices()); ++j)
    if (j != static_cast<uint32_t>(net_.slice()))
      send_(j, layer_part{static_cast<uint32_t>(net_.slice()), step_, l, false,
                          tensor_buffer{part_}});
  backward_ = false;
  layer_ = l;
  return caf::none;
}

caf::error slice_exchange::run_backward(int l) {
  if (auto err = net_.backward(l, partials_))
    return err;
  if (l == 0) {
    state_ = state::ready;
    return caf::none;
  }
  for (uint32_t j = 0; j < static_cast<uint32_t>(net_.slices()); ++j)
    if (j != static_cast<uint32_t>(net_.slice()))
      send_(j, layer_part{static_cast<uint32_t>(net_.slice()), step_, l - 1, true,
                          tensor_buffer{partials_[j]}});
  backward_ = true;
  layer_ = l - 1;
  return caf::none;
}

caf::error slice_exchange::advance() {
  const size_t others = static_cast<size_t>(net_.slices() - 1);
  const int last = net_.dense().layer_count() - 1;
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
    for (auto& p : parts) {
      auto& v = p.data.values;
      auto err = backward_ ? net_.accept_partial(layer_, static_cast<int>(p.from), v.data(), v.size())
                           : net_.accept_part(layer_, static_cast<int>(p.from), v.data(), v.size());
      if (err)
        return err;
    }
    caf::error err;
    if (backward_) {
      net_.finish_partials(layer_);
      err = run_backward(layer_);
    } else if (layer_ < last) {
      err = send_forward(layer_ + 1);
    } else {
      err = net_.begin_backward();
      if (!err)
        err = run_backward(last);
    }
    if (err)
      return err;
  }
  return caf::none;
}

} // namespace actorps
