// The Chief's set-up work: preparing the run (model, plan, checkpoints, controller), sending the
// shards their setups, and restoring a shard that went down from the last checkpoint.
#include "train/model_report.hpp"
#include "actors/chief_state.hpp"
#include "actors/reach_later.hpp"

#include "actors/chief_checkpoints.hpp"
#include "control/parameter_store.hpp"
#include "control/placement.hpp"
#include "actors/shard_reads.hpp"
#include "control/slicing.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "compute/cpu_backend.hpp"
#include "model/column_split.hpp"
#include "model/init.hpp"
#include "saved_model/saved_model.hpp"

#include <caf/actor_system.hpp>

#include <algorithm>

namespace actorps {

using namespace detail;

namespace {

session_kind session_kind_of_mode(train_mode m) {
  switch (m) {
    case train_mode::async: return session_kind::async;
    case train_mode::sync: return session_kind::sync;
    case train_mode::ssp: return session_kind::ssp;
    case train_mode::model_parallel: break;
  }
  return session_kind::model_parallel;
}

const char* tag = "chief";

// Shard s's setup: from ckpt when given, else the seeded initial values in `values`.
caf::expected<shard_setup> setup_for(chief_pointer self, uint32_t s, const checkpoint_on_disk* ckpt,
                                     const std::vector<std::vector<float>>* values) {
  auto& st = self->state;
  shard_setup setup;
  setup.shard = s;
  setup.plan = st.plan;
  setup.optimizer = to_optimizer_config(st.shard_opt);
  auto& cluster = st.cfg.cluster;
  setup.workers = cluster.worker_ids();
  setup.session = {cluster.in_graph() ? session_kind::in_graph : session_kind_of_mode(cluster.mode), cluster.replicas_to_aggregate, cluster.staleness,
                   static_cast<int64_t>(cluster.step_timeout.count()), static_cast<uint32_t>(cluster.workers.size())};
  if (cluster.elastic.on && cluster.mode == train_mode::sync && cluster.elastic.aggregate == elastic_aggregate::all)
    setup.session.sum_over = static_cast<uint32_t>(cluster.workers.size()); // linear lr scaling with the membership
  if (ckpt) { // (its values and slots follow in pieces: send_pieces)
    if (auto err = check_same_placement(ckpt->manifest, st.plan, ckpt->path))
      return err;
    setup.pieces = true;
    setup.version = ckpt->files.at(s).version;
    return setup;
  }
  for (uint32_t i : parts_of(st.plan, s)) {
    auto& part = st.plan.parts[i];
    const uint32_t begin = part_offset(st.plan, part);
    auto& whole = (*values)[part.variable];
    if (whole.empty()) { // an embedding table: the shard makes its part (as TF1 runs initializers on the ps)
      if (std::find(setup.generated.begin(), setup.generated.end(), part.variable) == setup.generated.end())
        setup.generated.push_back(part.variable);
      setup.table_seed = st.cfg.train.seed;
      continue;
    }
    setup.initial.push_back({part.variable, begin, tensor_copy(whole.data() + begin, part_floats(st.plan, part))});
  }
  return setup;
}

} // namespace

namespace {

// Sends shard s piece i of its restore, and the next once it is answered; done after the last.
void send_pieces(chief_pointer self, uint32_t s, std::shared_ptr<restore_pieces> pieces, size_t i,
                 std::function<void()> done, failed_fn failed) {
  auto piece = pieces->piece(i);
  if (!piece)
    return failed(describe(piece.error()));
  const bool last = piece->last;
  self->request(self->state.cfg.shards[s], self->state.cfg.cluster.request_timeout, init_atom_v, std::move(*piece))
    .then(
      [=](const setup_reply&) {
        if (last)
          return done();
        send_pieces(self, s, pieces, i + 1, done, failed);
      },
      [=](caf::error& err) { failed(describe(err)); });
}

// Shard s's restore after its setup, in pieces of 16 MiB read from the checkpoint's files.
std::shared_ptr<restore_pieces> pieces_for(chief_pointer self, uint32_t s, const checkpoint_on_disk& ckpt) {
  return std::make_shared<restore_pieces>(ckpt, self->state.plan, s, size_t{1} << 22);
}

// Sends shard s its setup (a shard that is already initialised keeps its values); `chain`: shard
// s + 1's once this one is answered.
void set_up_shard(chief_pointer self, uint32_t s, std::shared_ptr<std::vector<std::vector<float>>> values, bool chain) {
  auto& st = self->state;
  if (s >= st.plan.shards)
    return;
  auto setup = setup_for(self, s, st.restored ? &*st.restored : nullptr, values.get());
  if (!setup)
    return fail_run(self, caf::make_error(errc::invalid_config,
                                          cat("restoring the checkpoint failed: ", describe(setup.error()))));
  auto name = cat("shard ", s, " at ", st.cfg.cluster.ps[s].str());
  auto next = [=] {
    if (chain)
      set_up_shard(self, s + 1, values, true);
  };
  auto failed = [=](std::string why) {
    execute(self, self->state.ctl->setup_failed(s, errc::peer_unreachable, cat("initialising ", name, " failed: ", why)));
    next();
  };
  self->request(st.cfg.shards[s], st.cfg.cluster.request_timeout, init_atom_v, std::move(*setup))
    .then(
      [=](const setup_reply& reply) {
        // (set up from a checkpoint: its snapshot's version counts the updates it holds)
        const bool holds = reply.already_initialized || self->state.restored;
        auto ready = [=] {
          log_line(tag, reply.already_initialized
                          ? cat(name, " was already initialised (version ", reply.version, ", global step ",
                                reply.version / self->state.cfg.cluster.slices, "); keeping its values")
                          : cat("initialised ", name));
          heard_from_shard(self, s);
          execute(self, self->state.ctl->shard_ready(s, self->clock().now(), holds ? reply.version : 0));
          next();
        };
        if (reply.already_initialized || !self->state.restored)
          return ready();
        send_pieces(self, s, pieces_for(self, s, *self->state.restored), 0, ready, failed);
      },
      [=](caf::error& err) { failed(describe(err)); });
}

} // namespace

// Sends every shard its setup. Restoring, one after another, each shard's values and slots
// following its setup in pieces of 16 MiB read from the checkpoint's files (the chief holds one
// piece at a time).
void detail::init_shards(chief_pointer self) {
  auto& st = self->state;
  auto values = std::make_shared<std::vector<std::vector<float>>>(std::move(st.start)); // (without a checkpoint)
  if (st.restored)
    return set_up_shard(self, 0, values, true);
  for (uint32_t s = 0; s < st.plan.shards; ++s)
    set_up_shard(self, s, values, false);
}


namespace {

// An embedding table's evaluation reads the rows the validation and test sets name (their ids,
// renumbered once), not the table: at 2^20 rows and more, pulling it whole cost a quarter of
// the cluster's time at one evaluation per epoch. The evaluation net holds those rows alone, its
// table's rows being their local rows: the chief never holds the table (a 2^26 x 16 one took 4.6
// GB). Returns the evaluation net's model: spec with the local table, or spec itself.
model_spec prepare_evaluation_rows(chief_state& st, const model_spec& spec) {
  auto table = std::find_if(st.plan.variables.begin(), st.plan.variables.end(), [](const variable_info& v) { return v.table; });
  const auto& d = *st.cfg.data;
  const size_t tokens = spec.input.size();
  if (table == st.plan.variables.end() || !d.token_ids || tokens == 0 || spec.layers.empty()
      || spec.layers.front().kind != layer_kind::embedding
      || d.validation.images.size() != size_t(d.validation.rows) * tokens || d.test.images.size() != size_t(d.test.rows) * tokens)
    return spec;
  std::vector<float> ids(d.validation.images);
  ids.insert(ids.end(), d.test.images.begin(), d.test.images.end());
  const auto variable = static_cast<uint32_t>(table - st.plan.variables.begin());
  chief_state::evaluation_rows eval{variable, row_exchange{st.plan, variable, ids.size()}};
  eval.rows.renumber(ids.data(), d.validation.rows + d.test.rows, static_cast<int>(tokens));
  eval.asks = row_reads_of(eval.rows, st.cfg.cluster.max_slice_floats);
  eval.local.assign(eval.rows.distinct() * eval.rows.cols(), 0.0f);
  const auto& rows = eval.rows.table_rows();
  for (uint32_t l = 0; l < rows.size(); ++l)
    eval.by_row.emplace_back(rows[l], l);
  std::sort(eval.by_row.begin(), eval.by_row.end());
  // the validation and test sets read through their local rows (the training set: its size only)
  auto& data = eval.data;
  data.train.rows = d.train.rows;
  data.train.cols = d.train.cols;
  data.train.shape = d.train.shape;
  data.validation = d.validation;
  data.test = d.test;
  std::copy(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(d.validation.images.size()), data.validation.images.begin());
  std::copy(ids.begin() + static_cast<std::ptrdiff_t>(d.validation.images.size()), ids.end(), data.test.images.begin());
  data.scaling = d.scaling;
  data.class_names = d.class_names;
  data.token_ids = true;
  model_spec local = spec;
  local.layers.front().bucket_bits = row_exchange::local_bits(size_t{1} << spec.layers.front().bucket_bits, eval.rows.distinct());
  log_line(tag, cat("evaluations read the ", eval.rows.distinct(), " rows of ", table->name, " that the validation and "
                    "test sets name (", table->rows, " rows in all) into a table of ", size_t{1} << local.layers.front().bucket_bits,
                    " rows"));
  st.eval_rows.emplace(std::move(eval));
  return local;
}

} // namespace

caf::error detail::prepare(chief_pointer self) {
  auto& st = self->state;
  auto& cluster = st.cfg.cluster;
  if (auto err = run_log::check_free(st.cfg.train.run_dir, st.cfg.train.name)) // (refused before anything
    return err;                                                                  // is printed or read)
  st.be = make_cpu_backend(1);
  auto fits = cluster_model(st.cfg.train.model, *st.cfg.data);
  if (!fits)
    return std::move(fits.error());
  model_spec spec = std::move(*fits);
  st.spec = spec;
  log_model(tag, st.cfg.train, spec);
  if (cluster.model_parallel()) {
    auto dense = dense_stack(spec);
    if (!dense)
      return std::move(dense.error());
    if (auto why = check_split(*dense, static_cast<int>(cluster.slices)); !why.empty())
      return caf::make_error(errc::invalid_config, why);
  }
  auto strategy = parse_placement(cluster.placement);
  st.plan = make_placement(spec.variables(), static_cast<uint32_t>(st.cfg.shards.size()), *strategy, cluster.partition,
                           cluster.table_partition);
  st.plan.scope = st.cfg.train.scope;
  auto evaluated = prepare_evaluation_rows(st, spec);
  auto net = network::make(*st.be, evaluated, evaluation_batch(evaluated));
  if (!net)
    return std::move(net.error());
  st.net = std::move(*net);
  if (!cluster.checkpoint_dir.empty()) {
    auto store = checkpoint_store::open(cluster.checkpoint_dir, cluster.checkpoint_keep);
    if (!store)
      return std::move(store.error());
    st.store.emplace(std::move(*store));
    if (cluster.checkpoint_restore) {
      std::vector<std::string> skipped;
      auto found = st.store->find_latest(skipped);
      if (!found)
        return std::move(found.error());
      if (*found) {
        for (auto& why : skipped)
          log_line(tag, cat("skipping a checkpoint that does not verify: ", why));
        auto& m = (*found)->manifest;
        if (auto err = check_same_model(m, spec.text(), checkpoint_variables(st.plan), (*found)->path))
          return err;
        if (auto err = check_same_placement(m, st.plan, (*found)->path))
          return err;
        log_line(tag, cat("restoring ", (*found)->path, ": global step ", m.global_step, ", ", m.examples,
                          " examples"));
        st.restored = std::move(**found);
      } else {
        log_line(tag, cat("no checkpoint in ", cluster.checkpoint_dir, "; starting from initial values"));
      }
    }
  }
  if (!st.restored) {
    auto start = starting_values(spec, st.cfg.train.init, st.cfg.train.seed, false); // (tables: made on the ps nodes)
    if (!start)
      return std::move(start.error());
    st.start = std::move(*start);
    if (!st.cfg.train.init.from.empty())
      log_line(tag, cat("starting from the values of ", st.cfg.train.init.from, " (weights digest ",
                        weights_digest(st.start), ")"));
  } else if (!st.cfg.train.init.from.empty()) {
    log_line(tag, cat("model.init-from ", st.cfg.train.init.from, " is not used: the run resumes from a checkpoint"));
  }
  // Last: a start-up that failed above leaves an existing run's files alone.
  auto log = run_log::open(st.cfg.train.run_dir, st.cfg.train.name, st.restored.has_value());
  if (!log)
    return std::move(log.error());
  st.log.emplace(std::move(*log));
  log_line(tag, placement_table(st.plan));
  st.workers.resize(cluster.workers.size());
  run_control_config rc;
  rc.workers = static_cast<uint32_t>(cluster.workers.size());
  rc.shards = static_cast<uint32_t>(st.cfg.shards.size());
  rc.mode = cluster.mode;
  rc.in_graph = cluster.in_graph();
  rc.replicas_to_aggregate = rc.in_graph ? 1 : cluster.replicas_to_aggregate; // in-graph: one update a step
  rc.slices = cluster.slices;
  rc.max_steps = cluster.elastic.on || cluster.in_graph() // (elastic: the leases count the epochs exactly)
                   ? st.cfg.train.max_steps
                   : step_budget(cluster.mode, st.cfg.train.max_steps, st.cfg.train.max_epochs,
                                 static_cast<int64_t>(st.cfg.data->train.rows), st.cfg.train.batch_size,
                                 cluster.replicas_to_aggregate, cluster.replicas());
  rc.budget_from_epochs = rc.max_steps > 0 && rc.max_steps != st.cfg.train.max_steps;
  if (rc.budget_from_epochs) // (each worker's partition exactly its epochs: the grants keep to it)
    rc.worker_budgets = worker_step_budgets(cluster.mode, st.cfg.train.max_epochs,
                                            static_cast<int64_t>(st.cfg.data->train.rows), st.cfg.train.batch_size,
                                            cluster.replicas_to_aggregate, cluster.replicas());
  rc.elastic = cluster.elastic.on;
  rc.min_workers = cluster.elastic.min_workers;
  rc.max_workers = cluster.elastic.max_workers;
  rc.grant_steps = grant_steps_for(cluster.mode, rc.max_steps, rc.workers, cluster.report_every);
  rc.train_rows = static_cast<int64_t>(st.cfg.data->train.rows);
  rc.progress_every = st.cfg.train.progress_every;
  rc.eval_every = st.cfg.train.eval_every;
  rc.eval_every_epochs = st.cfg.train.eval_every_epochs;
  rc.checkpoints = st.store.has_value();
  rc.shards_recoverable = st.store && st.cfg.reconnect_shard && !cluster.model_parallel();
  rc.checkpoint_every_steps = cluster.checkpoint_every_steps;
  rc.checkpoint_every_seconds = cluster.checkpoint_every_seconds;
  rc.startup_timeout = cluster.startup_timeout;
  rc.request_timeout = cluster.request_timeout;
  for (size_t j = 0; j < cluster.workers.size(); ++j)
    rc.worker_names.push_back(cat("worker ", j, " at ", cluster.workers[j].str()));
  for (size_t s = 0; s < cluster.ps.size(); ++s)
    rc.shard_names.push_back(cat("shard ", s, " at ", cluster.ps[s].str()));
  rc.should_stop = [self](int64_t steps, int64_t examples) { return self->state.monitor->should_stop(steps, examples); };
  st.ctl.emplace(std::move(rc));
  in_graph_prepare(self);
  elastic_prepare(self);
  if (st.restored)
    st.ctl->resume(st.restored->manifest.global_step, st.restored->manifest.examples,
                   st.restored->manifest.train_seconds, st.restored->manifest.members);
  return caf::none;
}

namespace {

// The reached shard s gets the newest checkpoint's values at the others' update count.
caf::error set_up_restored(chief_pointer self, uint32_t s, parameter_shard_actor hdl) {
  auto& st = self->state;
  std::vector<std::string> skipped;
  auto found = st.store->find_latest(skipped);
  if (!found || !*found)
    return caf::make_error(errc::file_error, cat("cannot restore shard ", s, ": ",
                                                 found ? cat("no checkpoint in ", st.store->dir()) : describe(found.error())));
  for (auto& why : skipped)
    log_line(tag, cat("skipping a checkpoint that does not verify: ", why));
  auto setup = setup_for(self, s, &**found, nullptr);
  if (!setup)
    return caf::make_error(errc::invalid_config, cat("cannot restore shard ", s, ": ", describe(setup.error())));
  st.cfg.shards[s] = std::move(hdl);
  self->monitor(st.cfg.shards[s]);
  if (s < st.cfg.row_links.size()) { // (the restarted shard's stream is another: its handle until it is open)
    st.cfg.row_links[s] = st.cfg.shards[s];
    relink_rows(self, s);
  }
  auto path = (*found)->path;
  auto step = (*found)->manifest.global_step;
  auto pieces = pieces_for(self, s, **found);
  auto restored_setup = std::make_shared<shard_setup>(std::move(*setup));
  auto failed = [=](std::string why) {
    execute(self, self->state.ctl->failed(0, errc::peer_unreachable, cat("restoring shard ", s, " failed: ", why)));
  };
  // The restored shard continues at the others' update count (sync: their step), its values
  // from the checkpoint; with one shard, or while the shards are set up, the checkpoint's count.
  auto send_setup = [=](std::vector<shard_stats>& others) {
    for (auto& x : others)
      restored_setup->version = std::max(restored_setup->version, x.version);
    self->request(self->state.cfg.shards[s], self->state.cfg.cluster.request_timeout, init_atom_v, *restored_setup)
      .then(
        [=](const setup_reply& reply) {
          auto restored = [=] {
            log_line(tag, reply.already_initialized
                            ? cat("shard ", s, " came back already initialised (version ", reply.version, ")")
                            : cat("shard ", s, " restored from ", path, " (step ", step, "), continuing at update ",
                                  restored_setup->version, "; training goes on"));
            execute(self, self->state.ctl->shard_restored(s, reply.version, self->clock().now()));
          };
          if (reply.already_initialized)
            return restored();
          send_pieces(self, s, pieces, 0, restored, failed);
        },
        [=](caf::error& err) { failed(describe(err)); });
  };
  std::vector<parameter_shard_actor> others;
  for (uint32_t o = 0; o < st.cfg.shards.size(); ++o)
    if (o != s)
      others.push_back(st.cfg.shards[o]);
  if (others.empty() || st.ctl->phase() == run_phase::init_shards) { // (setting up: the restore is the setup)
    std::vector<shard_stats> none;
    send_setup(none);
  } else {
    ask_every_shard<shard_stats>(self, others, st.cfg.cluster.request_timeout, "reading the version", send_setup,
                                 failed, stats_atom_v);
  }
  return caf::none;
}

} // namespace

// Opens a row link to restored shard s (the node's connect runs in a helper); until it is open,
// and where it cannot be, the shard's rows are read through its handle.
void detail::relink_rows(chief_pointer self, uint32_t s) {
  auto& st = self->state;
  if (!st.cfg.relink_rows)
    return;
  const auto hdl = st.cfg.shards[s];
  reach_later<parameter_shard_actor>(
    self, st.detached, [relink = st.cfg.relink_rows, s, hdl] { return relink(s, hdl); },
    [=](parameter_shard_actor link) {
      auto& st = self->state;
      if (st.cfg.shards[s] != hdl) { // (restarted again meanwhile: that restart opens its own)
        caf::anon_send_exit(link, caf::exit_reason::user_shutdown);
        return;
      }
      self->monitor(link);
      st.cfg.row_links[s] = std::move(link);
      log_line(tag, cat("evaluations read restored shard ", s, "'s rows over a tensor stream again"));
    },
    [=](caf::error err) {
      log_line(tag, cat("evaluations read restored shard ", s, "'s rows through its handle: ", describe(err)));
    });
}

// Restores shard s from the newest checkpoint once its restart is reached (the node's connect
// runs in a helper: the chief handles its other inputs meanwhile); a failure fails the run.
void detail::restore_shard(chief_pointer self, uint32_t s) {
  reach_later<parameter_shard_actor>(
    self, self->state.detached, [connect = self->state.cfg.reconnect_shard, s] { return connect(s); },
    [=](parameter_shard_actor hdl) {
      if (auto err = set_up_restored(self, s, std::move(hdl)))
        execute(self, self->state.ctl->failed(0, errc::peer_unreachable, describe(err)));
    },
    [=](caf::error err) {
      execute(self, self->state.ctl->failed(0, errc::peer_unreachable,
                                            cat("shard ", s, " did not come back: ", describe(err))));
    });
}

} // namespace actorps
