// In-graph replication's steps on the chief (train.replication = in-graph): the rules are
// control/in_graph_driver's (shared with the simulator); this file is its host: the next global
// batch from the one data order, parts sent to the workers as compute requests, the average
// pushed through the shards, the stall's pause as a delayed message.
#include "actors/chief_state.hpp"

#include "control/fan_in.hpp"
#include "control/slicing.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"

namespace actorps {

using namespace detail;

namespace {

const char* tag = "chief";

class chief_host final : public in_graph_host {
public:
  explicit chief_host(chief_pointer self) : self_(self) {
  }

  run_control& run() override {
    return *self_->state.ctl;
  }

  void execute(run_commands cmds) override {
    detail::execute(self_, std::move(cmds));
  }

  run_time now() override {
    return self_->clock().now();
  }

  int batch_rows() override {
    auto& g = self_->state.in_graph;
    if (g.rows.empty())
      g.order->next_indices(g.rows, g.augment_seed);
    return static_cast<int>(g.rows.size());
  }

  void batch_done() override {
    self_->state.in_graph.rows.clear();
  }

  void send_part(uint64_t step, const in_graph_round::assignment& a) override {
    auto& st = self_->state;
    auto& g = st.in_graph;
    auto& part = g.driver->round().part_at(a.part);
    gradient_request req;
    req.step = step;
    req.part = a.part;
    req.rows.assign(g.rows.begin() + part.begin, g.rows.begin() + part.begin + part.rows);
    req.augment_seed = g.augment_seed * 1000003ULL + a.part;
    auto self = self_;
    auto w = a.worker;
    self->request(st.workers[w], st.cfg.cluster.step_timeout, compute_atom_v, std::move(req))
      .then(
        [=](gradient_reply& rep) {
          self->state.in_graph.driver->part_delivered(w, rep.step, rep.part, rep.rows, rep.loss_sum, std::move(rep.grads));
        },
        [=](caf::error& err) { self->state.in_graph.driver->part_failed(w, step, describe(err)); });
  }

  // Pushes the step's average to every shard; the step counts once every shard applied it.
  void push_average(const in_graph_round::result& result, uint64_t token) override {
    auto& st = self_->state;
    std::vector<const float_vector*> by_variable(st.plan.variables.size(), nullptr);
    for (auto& slice : result.average)
      if (slice.variable < by_variable.size())
        by_variable[slice.variable] = &slice.data.values;
    auto fill = [&](uint32_t k, uint32_t offset, uint32_t count, float* dst) -> caf::error {
      if (k >= by_variable.size() || by_variable[k] == nullptr || offset + count > by_variable[k]->size())
        return caf::make_error(errc::protocol_error, cat("the averaged gradient lacks variable ", k, " [", offset, ", ",
                                                         offset + count, ")"));
      std::copy_n(by_variable[k]->data() + offset, count, dst);
      return caf::none;
    };
    std::vector<std::pair<uint32_t, push_request>> pushes;
    for (uint32_t s = 0; s < st.plan.shards; ++s) {
      auto requests = push_requests_for(held_ranges(st.plan, s), chief_worker_id, result.step,
                                        st.cfg.cluster.max_slice_floats, fill);
      if (!requests)
        return execute(run().failed(0, errc::protocol_error, cat("in-graph step ", result.step, ": ",
                                                                 describe(requests.error()))));
      for (auto& req : *requests) {
        req.scope = st.plan.scope;
        pushes.emplace_back(s, std::move(req));
      }
    }
    auto self = self_;
    auto done = [self, token, rows = result.rows, loss = result.loss_sum](std::vector<bool>&) {
      self->state.in_graph.driver->applied(token, rows, loss);
    };
    auto failed = [self, token](std::string why) { self->state.in_graph.driver->apply_failed(token, why); };
    if (pushes.empty()) {
      std::vector<bool> none;
      return done(none);
    }
    auto fan = fan_in<bool>::make(pushes.size(), done, failed);
    for (size_t i = 0; i < pushes.size(); ++i) {
      auto s = pushes[i].first;
      self->request(st.cfg.shards[s], st.cfg.cluster.request_timeout, push_atom_v, std::move(pushes[i].second))
        .then([fan, i](const push_reply&) { fan->put(i, true); },
              [fan, s](caf::error& err) { fan->fail(cat("the in-graph push to shard ", s, " failed: ", describe(err))); });
    }
  }

  void step_after(std::chrono::milliseconds pause) override {
    self_->delayed_send(self_, pause, step_atom_v);
  }

  void log(const std::string& line) override {
    log_line(tag, line);
  }

private:
  chief_pointer self_;
};

} // namespace

void detail::in_graph_prepare(chief_pointer self) {
  auto& st = self->state;
  if (!st.cfg.cluster.in_graph())
    return;
  auto workers = static_cast<uint32_t>(st.cfg.cluster.workers.size());
  auto& train = st.cfg.data->train;
  auto& g = st.in_graph;
  g.host = std::make_unique<chief_host>(self);
  g.driver = std::make_unique<in_graph_driver>(workers, st.cfg.cluster.step_timeout, *g.host);
  g.order = std::make_unique<batcher>(train, index_range{0, static_cast<int>(train.rows)},
                                      st.cfg.train.batch_size * static_cast<int>(workers),
                                      static_cast<uint64_t>(st.cfg.train.seed));
}

void detail::in_graph_step(chief_pointer self) {
  if (auto& d = self->state.in_graph.driver)
    d->step();
}

void detail::in_graph_worker_down(chief_pointer self, uint32_t j) {
  if (auto& d = self->state.in_graph.driver)
    d->worker_down(j);
}

} // namespace actorps
