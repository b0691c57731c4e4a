// The Chief's elastic membership: checking a worker's hello against the run, joins, the data
// leases (data/epoch_ledger) that make every epoch use each example exactly once across joins,
// leaves and crashes, leaves, and what they write to metrics.jsonl and summary.json.
#include "actors/chief_state.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"


namespace actorps {

using namespace detail;

namespace {

const char* tag = "chief";

std::string who(const chief_state& st, const worker_hello& hello) {
  if (hello.worker == joining_worker)
    return cat("a joining worker at ", hello.host);
  if (hello.worker < st.cfg.cluster.workers.size())
    return cat("worker ", hello.worker, " at ", st.cfg.cluster.workers[hello.worker].str());
  return cat("worker ", hello.worker, " at ", hello.host);
}

// Whether the request comes from the worker registered under req.worker.
bool from_member(chief_pointer self, uint32_t worker) {
  auto& st = self->state;
  auto from = caf::actor_cast<caf::actor_addr>(self->current_sender());
  return worker < st.workers.size() && st.workers[worker] && from == st.workers[worker].address();
}

// Applies a worker's lease reports; logs and records every epoch they complete.
caf::error settle(chief_pointer self, const lease_request& req) {
  auto& st = self->state;
  if (auto err = st.elastic.desk->settle(req))
    return err;
  const auto rows = static_cast<int64_t>(st.cfg.data->train.rows);
  for (auto& t : st.elastic.desk->take_completed()) {
    bool exact = t.examples == rows && t.duplicates == 0;
    st.elastic.epochs_counted += 1;
    st.elastic.counts_exact = st.elastic.counts_exact && exact;
    log_line(tag, cat("epoch ", t.epoch, " used ", t.examples, " of ", rows, " examples once each",
                      t.duplicates > 0 ? cat(", ", t.duplicates, " twice (a defect)") : std::string{},
                      t.reissued > 0 ? cat("; ", t.reissued, " handed out again after a leave or crash") : std::string{}));
    if (st.monitor) {
      json_object row;
      row.add("event", "epoch_examples")
        .add("epoch", t.epoch)
        .add("examples", t.examples)
        .add("train_rows", rows)
        .add("duplicates", t.duplicates)
        .add("reissued", t.reissued)
        .add("exact", exact);
      if (auto err = st.monitor->record(std::move(row)))
        log_line(tag, cat("writing metrics.jsonl failed: ", describe(err)));
    }
  }
  return caf::none;
}

} // namespace

caf::error detail::check_hello(chief_pointer self, const worker_hello& hello) {
  auto& st = self->state;
  if (!(hello.byte_order_probe == std::vector<float>{byte_order_probe_value}))
    return caf::make_error(errc::protocol_error,
                           cat(who(st, hello), " stores floats in another byte order; raw tensor copies need one"));
  auto mine = model_signature(st.plan.variables);
  if (hello.model != mine)
    return caf::make_error(errc::wrong_cluster, cat(who(st, hello), " belongs to another cluster: its model is [",
                                                    hello.model, "], this run trains [", mine, "] (check model.*)"));
  if (hello.placement != st.plan.strategy || hello.shards != st.plan.shards)
    return caf::make_error(errc::wrong_cluster,
                           cat(who(st, hello), " belongs to another cluster: it places variables ", hello.placement,
                               " on ", hello.shards, " shards, this run ", st.plan.strategy, " on ", st.plan.shards,
                               " (check cluster.placement and cluster.ps)"));
  return caf::none;
}

void detail::elastic_prepare(chief_pointer self) {
  auto& st = self->state;
  if (!st.cfg.cluster.elastic.on)
    return;
  const int rows = st.cfg.data->train.rows;
  const int lease = static_cast<int>(std::min<int64_t>(
    rows, static_cast<int64_t>(st.cfg.cluster.elastic.lease_batches) * st.cfg.train.batch_size));
  // A resumed run continues the checkpoint's data plan; one without (taken before elastic
  // training) goes on at the epoch its examples reached, handed out whole.
  int64_t first = st.restored ? st.restored->manifest.examples / rows : 0;
  st.elastic.desk.emplace(rows, lease, st.cfg.train.seed, first);
  std::string from = first > 0 ? cat(" from epoch ", first) : "";
  if (st.restored && !st.restored->manifest.data_plan.empty()) {
    if (auto err = st.elastic.desk->ledger().load(st.restored->manifest.data_plan)) // (leaves it as it was)
      log_line(tag, cat("the checkpoint's data plan is not usable (", describe(err), "); epoch ", first,
                        " is handed out whole again"));
    else
      from = cat("; continuing the checkpoint's data plan (", st.elastic.desk->ledger().reported(), " examples reported)");
  }
  log_line(tag, cat("elastic: ", st.cfg.cluster.elastic.min_workers, " to ", st.cfg.cluster.elastic.max_workers,
                    " workers; data in leases of ", lease, " examples", from));
}

caf::result<worker_welcome> detail::on_join(chief_pointer self, const worker_hello& hello) {
  auto& st = self->state;
  if (auto err = check_hello(self, hello))
    return err;
  auto verdict = st.ctl->worker_joining(self->clock().now());
  if (verdict.code != errc::none)
    return caf::make_error(verdict.code, verdict.text);
  if (verdict.index >= st.workers.size())
    st.workers.resize(verdict.index + 1);
  log_line(tag, cat("worker ", verdict.index, " is joining from ", hello.host));
  execute(self, std::move(verdict.then));
  worker_welcome welcome;
  welcome.plan = st.plan;
  welcome.workers = st.ctl->live();
  welcome.index = verdict.index;
  return welcome;
}

caf::result<data_lease> detail::on_lease(chief_pointer self, const lease_request& req) {
  auto& st = self->state;
  if (!st.elastic.desk)
    return caf::make_error(errc::protocol_error, "data leases are for elastic jobs (cluster.elastic)");
  if (!from_member(self, req.worker))
    return caf::make_error(errc::protocol_error, cat("a lease request for worker ", req.worker,
                                                     " from another sender"));
  if (auto err = settle(self, req))
    return err;
  return st.elastic.desk->answer(req.worker, st.ctl->may_train(req.worker), st.ctl->live());
}

caf::result<data_lease> detail::on_leave(chief_pointer self, const lease_request& req) {
  auto& st = self->state;
  if (!from_member(self, req.worker))
    return caf::make_error(errc::protocol_error, cat("a leave for worker ", req.worker, " from another sender"));
  if (st.elastic.desk) {
    if (auto err = settle(self, req))
      return err;
    if (auto back = st.elastic.desk->release(req.worker); back > 0)
      log_line(tag, cat("worker ", req.worker, "'s unfinished data (", back, " examples) goes to the others"));
  }
  execute(self, st.ctl->worker_left(req.worker, self->clock().now()));
  if (st.ctl->phase() != run_phase::done)
    in_graph_worker_down(self, req.worker);
  return data_lease{};
}

void detail::elastic_worker_down(chief_pointer self, uint32_t j) {
  auto& st = self->state;
  if (!st.elastic.desk)
    return;
  if (auto back = st.elastic.desk->release(j); back > 0 && st.ctl->phase() == run_phase::training)
    log_line(tag, cat("worker ", j, " went down with ", back, " examples of its data leases unfinished; they go to the others"));
}

void detail::record_membership(chief_pointer self, const run_command& c) {
  auto& st = self->state;
  auto& e = st.elastic;
  if (c.text == "join")
    ++e.joins;
  else if (c.text == "leave")
    ++e.leaves;
  else if (c.text == "crash")
    ++e.crashes;
  log_line(tag, cat("membership: ", c.text, " of worker ", c.index, " at step ", c.step, "; ", c.workers,
                    " live worker(s)"));
  if (!st.monitor)
    return;
  json_object row;
  row.add("event", c.text).add("worker", static_cast<int64_t>(c.index)).add("workers", static_cast<int64_t>(c.workers))
    .add("global_step", c.step);
  if (auto err = st.monitor->record(std::move(row)))
    log_line(tag, cat("writing metrics.jsonl failed: ", describe(err)));
}

void detail::describe_elastic(chief_pointer self, json_object& extra) {
  auto& st = self->state;
  auto& e = st.elastic;
  extra.add("elastic", st.cfg.cluster.elastic.on);
  if (!st.cfg.cluster.elastic.on)
    return;
  extra.add("workers_joined", e.joins)
    .add("workers_left", e.leaves)
    .add("workers_crashed", e.crashes)
    .add("epochs_counted", e.epochs_counted)
    .add("epoch_counts_exact", e.counts_exact)
    .add("examples_reported", e.desk ? e.desk->ledger().reported() : int64_t{0});
}

} // namespace actorps
