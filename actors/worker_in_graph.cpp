// A worker's side of in-graph replication: the chief asks for the gradient of some rows of a
// step's global batch; the worker pulls that step's parameters from the shards (once per step,
// however many parts it is given), computes the rows' gradient and answers with it.
#include "control/fan_in.hpp"
#include "actors/worker_state.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"

#include <cmath>

namespace actorps::detail {

namespace {

using phase = in_graph_params::phase;

// Calls k once the model holds step's parameters (at once when it does), or with the pull's error.
void with_parameters(worker_pointer self, uint64_t step, std::function<void(caf::error)> k) {
  auto& p = self->state.params;
  if (p.step == step && p.at == phase::held)
    return k(caf::none);
  if (p.step == step && p.at == phase::pulling)
    return p.waiting.push_back(std::move(k));
  auto superseded = std::move(p.waiting); // an older step's pull: its parts are no longer wanted
  p = {phase::pulling, step, {std::move(k)}};
  for (auto& w : superseded)
    w(caf::make_error(errc::protocol_error, cat("step ", step, " began before the parameters of this part's step arrived")));
  auto& st = self->state;
  auto finish = [self, step](caf::error err) {
    auto& p = self->state.params;
    if (p.step != step || p.at != phase::pulling)
      return;
    p.at = err ? phase::none : phase::held;
    auto waiting = std::move(p.waiting);
    p.waiting.clear();
    for (auto& w : waiting)
      w(err);
  };
  size_t n = 0;
  for (auto& reqs : st.pulls)
    n += reqs.size();
  if (n == 0)
    return finish(caf::none);
  auto fan = fan_in<bool>::make(
    n, [finish](std::vector<bool>&) { finish(caf::none); },
    [finish](std::string why) { finish(caf::make_error(errc::peer_unreachable, why)); });
  size_t i = 0;
  for (uint32_t s = 0; s < st.pulls.size(); ++s)
    for (auto& req : st.pulls[s]) {
      self->request(st.cfg.shards[s], st.cfg.cluster.request_timeout, pull_atom_v, req)
        .then(
          [self, fan, i, s, step](const pull_reply& reply) {
            auto& p = self->state.params;
            if (p.step != step || p.at != phase::pulling)
              return;
            if (upload(self, s, reply.slices))
              fan->put(i, true);
          },
          [fan, s](caf::error& err) { fan->fail(cat("pull from shard ", s, " failed: ", describe(err))); });
      ++i;
    }
}

// The gradient of req's rows with the parameters the model holds.
caf::expected<gradient_reply> gradient_of(worker_pointer self, const gradient_request& req) {
  auto& st = self->state;
  const int n = static_cast<int>(req.rows.size());
  copy_examples(st.cfg.data->train, st.cfg.train.data.augment, req.rows.data(), n, req.augment_seed, st.images.data(),
                st.labels.data());
  auto& model = st.step->model();
  model.load_batch(st.images.data(), st.labels.data(), n);
  if (auto err = st.step->begin(n))
    return err;
  st.step->end();
  auto m = model.take_metrics();
  if (!m)
    return std::move(m.error());
  if (auto err = check_divergence(*m, cat("in-graph step ", req.step)))
    return err;
  gradient_reply out{req.step, req.part, n, m->loss * static_cast<double>(m->rows), {}};
  for (uint32_t k = 0; k < st.plan.variables.size(); ++k) {
    auto& v = st.plan.variables[k];
    const size_t size = static_cast<size_t>(v.rows) * v.cols;
    float_vector values(size);
    if (auto err = model.download_gradient(k, 0, values.data(), size))
      return err;
    out.grads.push_back({k, 0, tensor_buffer{std::move(values)}});
  }
  st.bytes_sent += payload_bytes(out.grads);
  st.ctl->part_computed();
  return out;
}

} // namespace

caf::result<gradient_reply> compute_part(worker_pointer self, gradient_request req) {
  auto& st = self->state;
  if (st.ctl->phase() != replica_phase::serving)
    return caf::make_error(errc::protocol_error, cat(st.tag, " does not compute in-graph parts now (",
                                                     to_string(st.ctl->phase()), ")"));
  if (caf::actor_cast<caf::actor_addr>(self->current_sender()) != st.cfg.chief.address())
    return caf::make_error(errc::protocol_error, cat(st.tag, ": an in-graph part from another sender than the chief"));
  const auto rows = static_cast<int64_t>(st.cfg.data->train.rows);
  if (req.rows.empty() || req.rows.size() > st.labels.size())
    return caf::make_error(errc::protocol_error, cat(st.tag, ": an in-graph part of ", req.rows.size(),
                                                     " rows (1 to ", st.labels.size(), " fit)"));
  for (auto r : req.rows)
    if (r < 0 || r >= rows)
      return caf::make_error(errc::protocol_error, cat(st.tag, ": in-graph part row ", r, " is outside the ", rows,
                                                       " training examples"));
  auto rp = self->make_response_promise<gradient_reply>();
  auto step = req.step;
  with_parameters(self, step, [self, rp, req = std::move(req)](caf::error err) mutable {
    if (err) {
      rp.deliver(std::move(err));
      return;
    }
    auto out = gradient_of(self, req);
    if (out)
      rp.deliver(std::move(*out));
    else
      rp.deliver(std::move(out.error()));
  });
  return rp;
}

} // namespace actorps::detail
