// Towers (compute.devices): one worker's step on several devices. Each tower holds the whole
// model on its own backend and computes the gradient of its share of the batch (rows split as
// evenly as they go, in device order); the towers run at once, the first with rows on the
// calling thread and the others on threads of their own. As backprop passes a layer each tower
// copies that layer's gradients to the host; once every tower has, the first averages them
// (each weighted by its rows, summed in device order, so the result does not depend on the
// threads' timing) and tells the worker, which pushes that layer while the towers go on: the
// pushes overlap backprop as one device's do. One tower is the whole step as it is without
// towers.
#include "actors/replica_step.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "model/network.hpp"

#include <condition_variable>
#include <mutex>
#include <thread>

namespace actorps {

namespace {

class tower_step : public replica_step, public replica_model {
public:
  explicit tower_step(std::vector<std::unique_ptr<network>> towers) : towers_(std::move(towers)) {
    for (auto& v : towers_.front()->spec().variables())
      grads_.emplace_back(static_cast<size_t>(v.rows) * static_cast<size_t>(v.cols));
    shares_.resize(towers_.size());
    host_.assign(towers_.size(), grads_);
    reached_.resize(towers_.size());
    failed_.resize(towers_.size());
  }

  // -- replica_step
  replica_model& model() override { return *this; }
  state status() const override { return state_; }
  caf::error begin(int rows) override {
    if (towers_.size() == 1) { // one tower: the whole step as is
      towers_[0]->forward(true);
      towers_[0]->backward(ready_);
      return done(rows);
    }
    size_t lead = 0; // the first tower with rows: on this thread, it averages and tells
    while (lead < towers_.size() && shares_[lead] == 0)
      ++lead;
    if (lead == towers_.size())
      return done(rows);
    const size_t vars = grads_.size();
    std::fill(reached_.begin(), reached_.end(), vars);
    std::fill(failed_.begin(), failed_.end(), caf::error{});
    averaged_ = vars;
    std::vector<std::thread> others;
    for (size_t t = lead + 1; t < towers_.size(); ++t)
      if (shares_[t] > 0)
        others.emplace_back([this, t] { compute(t, [this, t](size_t first) { stage(t, first); }); });
    compute(lead, [this, lead, rows](size_t first) {
      stage(lead, first);
      wait_for_all(first);
      if (!first_failure())
        average(first, rows);
    });
    for (auto& th : others)
      th.join();
    if (auto err = first_failure())
      return err;
    if (averaged_ > 0) // (a model whose first layers have no variables: nothing left to tell)
      average(0, rows);
    return done(rows);
  }
  caf::error receive(layer_part part) override {
    return caf::make_error(errc::protocol_error,
                           cat("a layer part from slice ", part.from, " reached a worker that trains towers"));
  }
  void end() override { state_ = state::idle; }
  void announce_stop() override {}
  int rows() const override { return rows_; }
  void on_gradients(gradients_ready ready) override { ready_ = std::move(ready); }

  // -- replica_model
  const model_spec& spec() const override { return towers_.front()->spec(); }
  caf::error upload_parameter(size_t var, size_t offset, const float* values, size_t n) override {
    for (auto& t : towers_) // (every tower trains the same values)
      if (auto err = t->upload_parameter(var, offset, values, n))
        return err;
    return caf::none;
  }
  caf::error download_gradient(size_t var, size_t offset, float* out, size_t n) override {
    if (towers_.size() == 1)
      return towers_[0]->download_gradient(var, offset, out, n);
    if (var >= grads_.size() || offset + n > grads_[var].size())
      return caf::make_error(errc::shape_mismatch, cat("gradient ", var, " [", offset, ", ", offset + n, ") is outside the model"));
    std::copy(grads_[var].begin() + static_cast<std::ptrdiff_t>(offset),
              grads_[var].begin() + static_cast<std::ptrdiff_t>(offset + n), out);
    return caf::none;
  }
  void load_batch(const float* images, const float* labels, int rows) override {
    const size_t cols = spec().input.size();
    const int n = static_cast<int>(towers_.size());
    for (int t = 0; t < n; ++t) {
      const int first = rows * t / n, last = rows * (t + 1) / n;
      shares_[static_cast<size_t>(t)] = last - first;
      if (last > first)
        towers_[static_cast<size_t>(t)]->load_batch(images + static_cast<size_t>(first) * cols, labels + first, last - first);
    }
  }
  caf::expected<batch_metrics> take_metrics() override {
    batch_metrics out;
    double correct = 0.0;
    for (auto& t : towers_) {
      auto m = t->take_metrics();
      if (!m)
        return m;
      out.loss += m->loss * static_cast<double>(m->rows);
      correct += m->accuracy * static_cast<double>(m->rows);
      out.rows += m->rows;
    }
    if (out.rows > 0) {
      out.loss /= static_cast<double>(out.rows);
      out.accuracy = correct / static_cast<double>(out.rows);
    }
    return out;
  }

private:
  caf::error done(int rows) {
    rows_ = rows;
    state_ = state::ready;
    return caf::none;
  }

  void compute(size_t t, const gradients_ready& ready) {
    towers_[t]->forward(true);
    towers_[t]->backward(ready);
  }

  // On tower t's thread: copies its gradients of variables [first, those copied before) to the
  // host and says it got there (a failed copy ends its part: it counts as there, its error kept).
  void stage(size_t t, size_t first) {
    caf::error err;
    for (size_t k = first; k < reached_[t] && !err; ++k) // (reached_[t] is only written by this thread)
      err = towers_[t]->download_gradient(k, 0, host_[t][k].data(), host_[t][k].size());
    std::lock_guard<std::mutex> guard{mtx_};
    if (err && !failed_[t])
      failed_[t] = std::move(err);
    reached_[t] = failed_[t] ? 0 : first;
    moved_.notify_all();
  }

  // On the lead's thread: waits until every tower with rows has copied variables [first, end).
  void wait_for_all(size_t first) {
    std::unique_lock<std::mutex> lock{mtx_};
    moved_.wait(lock, [&] {
      for (size_t t = 0; t < towers_.size(); ++t)
        if (shares_[t] > 0 && reached_[t] > first)
          return false;
      return true;
    });
  }

  caf::error first_failure() {
    std::lock_guard<std::mutex> guard{mtx_};
    for (auto& err : failed_)
      if (err)
        return err;
    return caf::none;
  }

  // grads[k] = sum over towers of (rows_t / rows) * gradient_t[k], in device order, for the
  // variables [first, those averaged before); then tells the worker they are ready.
  void average(size_t first, int rows) {
    for (size_t k = first; k < averaged_; ++k) {
      auto& g = grads_[k];
      std::fill(g.begin(), g.end(), 0.0f);
      for (size_t t = 0; t < towers_.size(); ++t) {
        if (shares_[t] == 0)
          continue;
        const float w = static_cast<float>(shares_[t]) / static_cast<float>(rows);
        const float* src = host_[t][k].data();
        for (size_t i = 0; i < g.size(); ++i)
          g[i] += w * src[i];
      }
    }
    averaged_ = first;
    if (ready_)
      ready_(first);
  }

  std::vector<std::unique_ptr<network>> towers_;
  std::vector<int> shares_;                            // rows of the loaded batch per tower
  std::vector<std::vector<float>> grads_;              // the averaged gradient, per variable
  std::vector<std::vector<std::vector<float>>> host_;  // per tower and variable: its gradient on the host
  std::mutex mtx_;                                     // guards reached_ and failed_
  std::condition_variable moved_;                      // a tower copied more
  std::vector<size_t> reached_;                        // per tower: the first variable it copied
  std::vector<caf::error> failed_;                     // per tower: why its copy failed
  size_t averaged_ = 0;                                // the first variable averaged this step
  gradients_ready ready_;
  state state_ = state::idle;
  int rows_ = 0;
};

} // namespace

caf::expected<std::unique_ptr<replica_step>> make_tower_step(const std::vector<backend*>& devices, const model_spec& spec,
                                                             int max_batch, uint64_t dropout_seed) {
  if (devices.empty())
    return caf::make_error(errc::invalid_argument, "towers need at least one device");
  std::vector<std::unique_ptr<network>> towers;
  const int per_tower = (max_batch + static_cast<int>(devices.size()) - 1) / static_cast<int>(devices.size());
  for (size_t t = 0; t < devices.size(); ++t) {
    auto net = network::make(*devices[t], spec, std::max(1, per_tower), dropout_seed + t);
    if (!net)
      return std::move(net.error());
    towers.push_back(std::move(*net));
  }
  return std::unique_ptr<replica_step>{new tower_step(std::move(towers))};
}

} // namespace actorps
