// In-graph replication's step: the cut of the global batch, the hand-out and reassignment of
// parts, and the row-weighted average in part order.
#include "control/in_graph_rules.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "compute/host_ops.hpp"
#include "data/batcher.hpp"

#include <algorithm>

namespace actorps {

in_graph_round::in_graph_round(uint32_t workers)
  : workers_(workers), live_(workers, true), benched_(workers, false), busy_(workers), queued_(workers) {
}

uint32_t in_graph_round::live_workers() const {
  return static_cast<uint32_t>(std::count(live_.begin(), live_.end(), true));
}

caf::expected<std::vector<in_graph_round::assignment>> in_graph_round::begin(uint64_t step, int rows) {
  if (rows < 1)
    return caf::make_error(errc::invalid_config, cat("in-graph step ", step, ": an empty global batch"));
  std::vector<uint32_t> ready;
  for (uint32_t w = 0; w < workers_; ++w)
    if (live_[w])
      ready.push_back(w);
  if (ready.empty())
    return caf::make_error(errc::peer_unreachable, cat("in-graph step ", step, ": no live worker"));
  step_ = step;
  running_ = true;
  stalled_ = false;
  const auto n = static_cast<uint32_t>(std::min<int>(static_cast<int>(workers_), rows));
  parts_.clear();
  for (uint32_t p = 0; p < n; ++p) {
    auto r = partition_range(rows, static_cast<int>(p), static_cast<int>(n));
    parts_.push_back({r.begin, r.size()});
  }
  grads_.assign(n, std::nullopt);
  losses_.assign(n, 0.0);
  std::fill(benched_.begin(), benched_.end(), false);
  for (uint32_t w = 0; w < workers_; ++w) {
    busy_[w].reset();
    queued_[w].clear();
  }
  std::vector<assignment> out;
  for (uint32_t p = 0; p < n; ++p) {
    auto w = ready[p % ready.size()];
    if (!busy_[w]) {
      busy_[w] = p;
      out.push_back({w, p});
    } else {
      queued_[w].push_back(p);
    }
  }
  return out;
}

std::optional<in_graph_round::assignment> in_graph_round::next_for(uint32_t w) {
  if (busy_[w] || !eligible(w))
    return std::nullopt;
  while (!queued_[w].empty()) {
    auto p = queued_[w].front();
    queued_[w].pop_front();
    if (!grads_[p]) {
      busy_[w] = p;
      return assignment{w, p};
    }
  }
  return std::nullopt;
}

caf::expected<in_graph_round::delivery> in_graph_round::deliver(uint32_t w, uint64_t step, uint32_t p, int rows,
                                                                double loss_sum, std::vector<variable_slice> grads) {
  delivery out;
  if (!running_ || step != step_ || w >= workers_)
    return out;
  if (p >= parts_.size())
    return caf::make_error(errc::protocol_error, cat("in-graph step ", step, ": worker ", w, " answered for part ", p,
                                                     " of ", parts_.size()));
  if (busy_[w] == p)
    busy_[w].reset();
  if (grads_[p]) { // computed twice (a reassigned part's first worker answered late)
    out.next = next_for(w);
    return out;
  }
  if (rows != parts_[p].rows)
    return caf::make_error(errc::protocol_error, cat("in-graph step ", step, ": worker ", w, " computed ", rows,
                                                     " rows of part ", p, ", which has ", parts_[p].rows));
  for (auto& other : grads_)
    if (other) {
      bool same = other->size() == grads.size();
      for (size_t i = 0; same && i < grads.size(); ++i)
        same = (*other)[i].variable == grads[i].variable && (*other)[i].offset == grads[i].offset
               && (*other)[i].data.values.size() == grads[i].data.values.size();
      if (!same)
        return caf::make_error(errc::protocol_error, cat("in-graph step ", step, ": worker ", w, "'s gradient of part ",
                                                         p, " is laid out unlike the other parts'"));
      break;
    }
  grads_[p] = std::move(grads);
  losses_[p] = loss_sum;
  out.what = verdict::accepted;
  out.next = next_for(w);
  return out;
}

std::vector<in_graph_round::assignment> in_graph_round::lose(uint32_t w, bool gone) {
  std::vector<assignment> out;
  if (w >= workers_)
    return out;
  if (gone)
    live_[w] = false;
  if (!running_)
    return out;
  benched_[w] = true;
  std::vector<uint32_t> orphans;
  if (busy_[w] && !grads_[*busy_[w]])
    orphans.push_back(*busy_[w]);
  busy_[w].reset();
  for (auto p : queued_[w])
    if (!grads_[p])
      orphans.push_back(p);
  queued_[w].clear();
  for (auto p : orphans) {
    std::optional<uint32_t> best;
    size_t best_load = 0;
    for (uint32_t v = 0; v < workers_; ++v) {
      if (!eligible(v))
        continue;
      size_t load = (busy_[v] ? 1 : 0) + queued_[v].size();
      if (!best || load < best_load) {
        best = v;
        best_load = load;
      }
    }
    if (!best) {
      stalled_ = true;
      return {};
    }
    if (!busy_[*best]) {
      busy_[*best] = p;
      out.push_back({*best, p});
    } else {
      queued_[*best].push_back(p);
    }
  }
  return out;
}

void in_graph_round::rejoin(uint32_t w) {
  if (w < workers_)
    live_[w] = true;
}

bool in_graph_round::ready() const {
  return running_ && std::all_of(grads_.begin(), grads_.end(), [](auto& g) { return g.has_value(); });
}

in_graph_round::stall_action in_graph_round::stall(std::chrono::steady_clock::time_point now,
                                                  std::chrono::nanoseconds timeout) {
  if (!stalled_since_)
    stalled_since_ = now;
  abandon();
  return now - *stalled_since_ >= timeout ? stall_action::give_up : stall_action::retry;
}

in_graph_round::result in_graph_round::complete() {
  stalled_since_.reset();
  result out;
  out.step = step_;
  for (auto& p : parts_)
    out.rows += p.rows;
  for (size_t p = 0; p < parts_.size(); ++p) {
    const float weight = static_cast<float>(parts_[p].rows) / static_cast<float>(out.rows);
    auto& g = *grads_[p];
    out.loss_sum += losses_[p];
    if (p == 0) {
      out.average = std::move(g);
      for (auto& slice : out.average)
        scale_values(slice.data.values.data(), slice.data.values.size(), weight);
      continue;
    }
    for (size_t i = 0; i < out.average.size(); ++i) // (in vector lanes: compute/host_ops)
      add_scaled(out.average[i].data.values.data(), g[i].data.values.data(), out.average[i].data.values.size(), weight);
  }
  abandon();
  return out;
}

void in_graph_round::abandon() {
  running_ = false;
  stalled_ = false;
  grads_.clear();
  for (uint32_t w = 0; w < workers_; ++w) {
    busy_[w].reset();
    queued_[w].clear();
  }
}

} // namespace actorps
