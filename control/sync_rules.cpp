// Synchronous and bounded-staleness update rules.
#include "control/sync_rules.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "compute/host_ops.hpp"
#include "compute/row_prefetch.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace actorps {

namespace {

std::vector<bool> live_from_start(uint32_t workers, uint32_t live_at_start) {
  std::vector<bool> live(workers, false);
  std::fill_n(live.begin(), live_at_start == 0 ? workers : std::min(live_at_start, workers), true);
  return live;
}

} // namespace

sync_rule::sync_rule(uint32_t workers, uint32_t replicas_to_aggregate, uint32_t live_at_start, uint32_t sum_over)
  : workers_(workers), replicas_(replicas_to_aggregate), sum_over_(sum_over), live_(live_from_start(workers, live_at_start)),
    grads_(workers) {
}

uint32_t sync_rule::live_workers() const {
  return static_cast<uint32_t>(std::count(live_.begin(), live_.end(), true));
}

uint32_t sync_rule::needed() const {
  return std::min(replicas_, std::max<uint32_t>(1, live_workers()));
}

namespace {

// The dense slices (ranges) of a push, in order; row slices differ from worker to worker.
std::vector<const variable_slice*> ranges_in(const std::vector<variable_slice>& grads) {
  std::vector<const variable_slice*> out;
  for (auto& g : grads)
    if (!g.by_rows())
      out.push_back(&g);
  return out;
}

bool same_layout(const std::vector<variable_slice>& a, const std::vector<variable_slice>& b) {
  auto x = ranges_in(a), y = ranges_in(b);
  if (x.size() != y.size())
    return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i]->variable != y[i]->variable || x[i]->offset != y[i]->offset
        || x[i]->data.values.size() != y[i]->data.values.size())
      return false;
  return true;
}

// Adds the push `add` to the sum `acc`: ranges value by value, in order; row slices of one
// table part merged by row (a row several workers touched is summed, a new one appended), parts
// in the order they first appear.
void add_push(std::vector<variable_slice>& acc, std::vector<variable_slice>& add, row_places& places) {
  size_t dense = 0;
  for (auto& a : acc) // (the ranges are laid out alike: same_layout)
    if (!a.by_rows()) {
      while (add[dense].by_rows())
        ++dense;
      add_into(a.data.values.data(), add[dense++].data.values.data(), a.data.values.size());
    }
  for (auto& g : add) {
    if (!g.by_rows())
      continue;
    auto same = std::find_if(acc.begin(), acc.end(), [&](const variable_slice& a) {
      return a.by_rows() && a.variable == g.variable && a.offset == g.offset;
    });
    if (same == acc.end()) {
      acc.push_back(std::move(g));
      continue;
    }
    const size_t cols = g.data.values.size() / g.rows.size();
    auto& ids = same->rows.ids;
    for (size_t j = 0; j < ids.size(); ++j)
      places.place(ids[j], static_cast<uint32_t>(j));
    // Each of g's rows: its place in the sum, the rows new to it appended (the top bit: first seen here)
    constexpr uint32_t first_here = uint32_t{1} << 31;
    std::vector<uint32_t> at(g.rows.size());
    for (size_t j = 0; j < g.rows.size(); ++j) {
      const auto [place, fresh] = places.place(g.rows.ids[j], static_cast<uint32_t>(ids.size()));
      if (fresh)
        ids.push_back(g.rows.ids[j]);
      at[j] = place | (fresh ? first_here : 0);
    }
    // The sum made once at its size (a float_vector grown or reserved moves value by value)
    float_vector sum(ids.size() * cols);
    auto& held = same->data.values;
    std::memcpy(sum.data(), held.data(), held.size() * sizeof(float));
    for (size_t j = 0; j < g.rows.size(); ++j) {
      const float* from = g.data.values.data() + j * cols;
      float* to = sum.data() + size_t{at[j] & ~first_here} * cols;
      if (at[j] & first_here)
        copy_row(from, cols, to);
      else
        add_row(from, cols, to);
    }
    held = std::move(sum);
    places.clear(ids);
  }
}

} // namespace

caf::expected<sync_rule::verdict> sync_rule::offer(uint32_t worker, uint64_t step,
                                                   std::vector<variable_slice> grads) {
  if (worker >= workers_)
    return caf::make_error(errc::unknown_worker, cat("worker ", worker, " is not in the cluster (",
                                                     workers_, " workers)"));
  live_[worker] = true;
  if (step < step_)
    return verdict::stale;
  if (step > step_ && catching_up_ && count_ == 0)
    step_ = step; // resumed from a checkpoint behind the cluster: the others' step (once)
  if (step > step_)
    return caf::make_error(errc::protocol_error, cat("worker ", worker, " pushed step ", step,
                                                     " but the current step is ", step_));
  if (grads_[worker])
    return caf::make_error(errc::protocol_error, cat("worker ", worker, " pushed step ", step, " twice"));
  for (auto& other : grads_)
    if (other && !same_layout(*other, grads))
      return caf::make_error(errc::protocol_error, cat("worker ", worker, "'s gradients for step ", step,
                                                       " are laid out differently from the others'"));
  grads_[worker] = std::move(grads);
  ++count_;
  last_ = worker;
  return verdict::accepted;
}

bool sync_rule::ready() const {
  return count_ > 0 && count_ >= needed();
}

sync_rule::completed sync_rule::complete() {
  catching_up_ = false;
  completed out;
  out.step = step_;
  out.waited_on = last_;
  const float scale = 1.0f / static_cast<float>(sum_over_ > 0 ? sum_over_ : count_);
  for (uint32_t w = 0; w < workers_; ++w) { // worker order: the sum does not depend on arrival
    if (!grads_[w])
      continue;
    out.released.push_back(w);
    if (out.average.empty()) {
      out.average = std::move(*grads_[w]);
      continue;
    }
    add_push(out.average, *grads_[w], places_);
  }
  for (auto& slice : out.average)
    scale_values(slice.data.values.data(), slice.data.values.size(), scale);
  for (auto& g : grads_)
    g.reset();
  count_ = 0;
  ++step_;
  return out;
}

bool sync_rule::lose(uint32_t worker) {
  if (worker >= workers_)
    return ready();
  live_[worker] = false;
  if (grads_[worker]) { // its process is gone: a restart pushes the step afresh
    grads_[worker].reset();
    --count_;
  }
  return ready();
}

std::vector<uint32_t> sync_rule::missing() const {
  std::vector<uint32_t> out;
  for (uint32_t w = 0; w < workers_; ++w)
    if (live_[w] && !grads_[w])
      out.push_back(w);
  return out;
}

ssp_rule::ssp_rule(uint32_t workers, uint32_t staleness, uint32_t live_at_start)
  : staleness_(staleness), done_(workers, 0), shift_(workers, 0) {
  for (bool on : live_from_start(workers, live_at_start))
    standing_.push_back(on ? standing::live : standing::away);
}

uint64_t ssp_rule::min_live() const {
  uint64_t m = std::numeric_limits<uint64_t>::max();
  for (uint32_t w = 0; w < done_.size(); ++w)
    if (live(w))
      m = std::min(m, done_[w]);
  return m == std::numeric_limits<uint64_t>::max() ? 0 : m;
}

uint64_t ssp_rule::finished(uint32_t worker, uint64_t step) {
  if (worker >= done_.size())
    return 0;
  if (standing_[worker] == standing::away) { // enters at the slowest live worker's count
    bool anyone = std::find(standing_.begin(), standing_.end(), standing::live) != standing_.end();
    auto floor = anyone ? min_live() : done_[worker];
    shift_[worker] = static_cast<int64_t>(floor) - static_cast<int64_t>(step);
    done_[worker] = floor;
  }
  standing_[worker] = standing::live;
  auto counted = static_cast<int64_t>(step) + 1 + shift_[worker];
  done_[worker] = std::max<uint64_t>(done_[worker], static_cast<uint64_t>(std::max<int64_t>(0, counted)));
  return done_[worker] - min_live();
}

bool ssp_rule::may_continue(uint32_t worker) const {
  return worker < done_.size() && done_[worker] - min_live() <= staleness_;
}

void ssp_rule::lose(uint32_t worker) {
  if (worker < standing_.size())
    standing_[worker] = standing::away;
}

void ssp_rule::resume() {
  for (auto& s : standing_)
    if (s == standing::live)
      s = standing::resumed;
}

std::vector<uint32_t> ssp_rule::slowest() const {
  std::vector<uint32_t> out;
  uint64_t m = min_live();
  for (uint32_t w = 0; w < done_.size(); ++w)
    if (live(w) && done_[w] == m)
      out.push_back(w);
  return out;
}

bool sync_rule::resume_at(uint64_t step) {
  if (step <= step_ || count_ > 0)
    return false;
  step_ = step;
  catching_up_ = true;
  return true;
}

} // namespace actorps
