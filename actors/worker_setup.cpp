// Setting a worker up: the compute backend, the step (whole model or one slice), its data
// partition, and checking the chief's plan and model-parallel group against them.
#include "control/run_control.hpp"
#include "control/slicing.hpp"
#include "actors/worker_state.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "gpu/device_select.hpp"

#include <algorithm>

namespace actorps::detail {

namespace {

// The worker's data: partition j of the replicas, prepared ahead by the input pipeline.
caf::error prepare_batches(worker_pointer self, int replica);

// The worker's backends: compute.devices (a tower each) or the one compute.device gives. A
// device keeps its name when its backend is of its kind; one that fell back to the CPU is named
// the CPU (the fallback's log line says why).
caf::error open_devices(worker_pointer self) {
  auto& st = self->state;
  auto& cfg = st.cfg;
  std::vector<device_name> wanted = cfg.train.device.devices;
  if (wanted.empty())
    wanted.push_back({cfg.train.device.mode == device_mode::cpu ? device_mode::cpu : device_mode::gpu,
                      cfg.train.device.mode == device_mode::cpu ? 0 : cfg.train.device.gpu_index});
  for (size_t i = 0; i < wanted.size(); ++i) {
    const auto& d = wanted[i];
    auto opts = cfg.train.device;
    const bool tower = !cfg.train.device.devices.empty();
    if (tower) {
      opts.mode = d.kind;
      opts.gpu_index = d.index;
    }
    auto be = select_backend(opts, st.tag);
    if (!be && tower) // (name the tower's device, not compute.device)
      return caf::make_error(static_cast<errc>(be.error().code()),
                             cat("compute.devices[", i, "] \"", d.kind == device_mode::gpu ? "gpu:" : "cpu:", d.index,
                                 "\": ", describe(be.error())));
    if (!be)
      return std::move(be.error());
    const bool as_named = (*be)->is_gpu() == (d.kind == device_mode::gpu);
    st.device_names.push_back(tf_device_name("worker", cfg.index, as_named ? d : device_name{device_mode::cpu, 0}));
    st.devices.push_back(std::move(*be));
  }
  return caf::none;
}

// The step on the worker's device(s): the whole model, one slice of a group, or towers
// (compute.devices: each step's batch split over them, their gradients averaged before one push).
caf::expected<std::unique_ptr<replica_step>> make_step(worker_pointer self, const model_spec& spec,
                                                       std::string& described) {
  auto& st = self->state;
  auto& cfg = st.cfg;
  if (!cfg.train.device.devices.empty() && (cfg.cluster.model_parallel() || cfg.cluster.in_graph()))
    return caf::make_error(errc::invalid_config, cat("compute.devices: towers train the whole model of a between-graph "
                                                     "worker; ", cfg.cluster.in_graph() ? "in-graph" : "model-parallel",
                                                     " workers take one device each"));
  if (auto err = open_devices(self))
    return err;
  if (!cfg.train.device.devices.empty()) {
    std::vector<backend*> devices;
    for (auto& be : st.devices)
      devices.push_back(be.get());
    described = cat("towers on ", join(st.device_names, ", "), " (each step's ", cfg.train.batch_size,
                    " examples split over ", devices.size(), ", their gradients averaged before one push)");
    return make_tower_step(devices, spec, cfg.train.batch_size, cfg.train.seed + cfg.index);
  }
  auto& be = *st.devices.front();
  described += cat("backend ", be.name());
  const auto slices = static_cast<int>(cfg.cluster.slices);
  // Made now, not when the chief's start arrives: another slice's first parts may come first
  // (they come over another connection) and must wait in the inbox. Until the group is known
  // there is nobody to send to.
  if (cfg.cluster.model_parallel())
    return make_sliced_step(be, spec, static_cast<int>(cfg.index) % slices, slices, cfg.train.batch_size,
                            [self](uint32_t to, layer_part part) {
                              if (to < self->state.peers.size())
                                self->send(self->state.peers[to], slice_atom_v, std::move(part));
                            });
  return make_whole_step(be, spec, cfg.train.batch_size, cfg.train.seed + cfg.index);
}

} // namespace

caf::error prepare(worker_pointer self) {
  auto& st = self->state;
  auto& cfg = st.cfg;
  auto fits = cluster_model(cfg.train.model, *cfg.data);
  if (!fits)
    return std::move(fits.error());
  model_spec spec = std::move(*fits);
  st.variables = spec.variables();
  std::string described;
  if (!spec.layers.empty() && spec.layers.front().kind == layer_kind::embedding) {
    // the network holds the batch's rows of the table alone (control/row_exchange)
    const size_t table_rows = size_t{1} << spec.layers.front().bucket_bits;
    const size_t slots = static_cast<size_t>(cfg.train.batch_size) * spec.input.size();
    spec.layers.front().bucket_bits = row_exchange::local_bits(table_rows, slots);
    st.table.emplace();
    st.table->table_size = table_rows;
    st.table->max_slots = slots;
    st.table->tokens = static_cast<int>(spec.input.size());
    described = cat("the embedding table's rows pulled per batch (at most ", size_t{1} << spec.layers.front().bucket_bits,
                    " of ", table_rows, "); ");
  }
  auto step = make_step(self, spec, described);
  if (!step)
    return std::move(step.error());
  st.step = std::move(*step);
  st.encoder = std::make_unique<gradient_encoder>(worker_wire(cfg.cluster, cfg.train.optimizer));
  for (auto& v : spec.variables())
    st.statistics.push_back(is_moving_statistic(v.name));
  st.images.resize(static_cast<size_t>(cfg.train.batch_size) * spec.input.size());
  st.labels.resize(static_cast<size_t>(cfg.train.batch_size));
  if (cfg.cluster.elastic.on) { // the chief hands out the data (replica_control takes the leases)
    log_line(st.tag, cat("elastic: data in leases from the chief; ", cfg.data->train.rows, " examples; ", described));
    return caf::none;
  }
  // the slices of a group train one replica: same partition, same batches
  const auto slices = static_cast<int>(cfg.cluster.slices);
  if (auto err = prepare_batches(self, static_cast<int>(cfg.index) / slices))
    return err;
  log_line(st.tag, cat(cfg.cluster.in_graph() ? std::string{"in-graph: parts of the chief's global batches"}
                                              : cat("partition ", st.partition),
                       "; ", described,
                       cfg.cluster.model_parallel() ? cat("; slice ", cfg.index % cfg.cluster.slices, " of ", slices,
                                                          " in group ", cfg.index / slices)
                                                    : std::string{}));
  return caf::none;
}

namespace {

caf::error prepare_batches(worker_pointer self, int replica) {
  auto& st = self->state;
  auto& cfg = st.cfg;
  auto replicas = static_cast<int>(cfg.cluster.replicas());
  auto range = partition_range(cfg.data->train.rows, replica, replicas);
  if (range.size() == 0)
    return caf::make_error(errc::invalid_config, cat("worker ", cfg.index, " has no training data: ",
                                                     cfg.data->train.rows, " examples for ", replicas, " replicas"));
  // (in-graph workers take their rows from the chief: nothing to prepare ahead)
  const bool own_order = !cfg.cluster.in_graph();
  // With an embedding table the pipeline's threads also renumber each batch's ids to local rows
  // (its hashing was half a text worker's step on its own thread)
  std::function<batch_finisher()> renumbering;
  if (st.table) {
    renumbering = [table = st.table->table_size, slots = st.table->max_slots, tokens = st.table->tokens] {
      auto mine = std::make_shared<batch_renumbering>(table, slots);
      return batch_finisher{[mine, tokens](float* images, int rows, batch_extras& out) {
        mine->renumber(images, rows, tokens, out.listed);
      }};
    };
  }
  st.batches = std::make_unique<batch_pipeline>(cfg.data->train, range, cfg.train.batch_size,
                                                cfg.train.seed + static_cast<uint64_t>(replica), cfg.train.data.augment,
                                                cfg.train.data.threads, own_order ? cfg.train.data.prefetch_batches : 0,
                                                renumbering);
  st.partition = cat("[", range.begin, ", ", range.end, ") of ", cfg.data->train.rows, " examples");
  return caf::none;
}

} // namespace

caf::error accept_plan(worker_pointer self, placement_plan plan) {
  auto& st = self->state;
  const auto& mine = st.variables;
  if (model_signature(plan.variables) != model_signature(mine) || plan.shards != st.cfg.shards.size())
    return caf::make_error(errc::protocol_error,
                           cat("the chief's plan (", plan.variables.size(), " variables on ", plan.shards,
                               " shards) does not match this worker's model (", mine.size(),
                               " variables) and ", st.cfg.shards.size(), " shards: check model.* and cluster.ps"));
  st.pulls.clear();
  std::vector<std::vector<slice_ref>> held;
  const uint32_t slices = st.cfg.cluster.slices;
  for (uint32_t s = 0; s < plan.shards; ++s) {
    held.push_back(held_ranges(plan, s, st.cfg.index % slices, slices));
    held.back().erase(std::remove_if(held.back().begin(), held.back().end(),
                                     [&](const slice_ref& r) { return plan.variables[r.variable].table; }),
                      held.back().end()); // (a table travels by rows: row_exchange)
    st.pulls.push_back(pull_requests_for(held.back(), st.cfg.index, st.cfg.cluster.max_slice_floats));
    for (auto& req : st.pulls.back()) {
      req.keep_view = st.cfg.cluster.wire.value_compression == sparsifier::topk; // later replies diff against these
      req.scope = plan.scope;
    }
  }
  // A slice's gradients are ready only when its group's step is: it pushes them in one go.
  st.pushes = push_plan{held, st.cfg.cluster.model_parallel() ? 0 : st.cfg.cluster.push_bucket_floats,
                        st.cfg.cluster.max_slice_floats};
  st.leads.reset(); // which parts go out early: measured over steps 6-25 (a step computed ahead pushes late anyway)
  if (st.pushes.count() > plan.shards && st.cfg.cluster.push_early.count() > 0 && st.cfg.cluster.overlap_steps == 0)
    st.leads.emplace(5, 20);
  if (st.table) {
    auto table = std::find_if(plan.variables.begin(), plan.variables.end(), [](const variable_info& v) { return v.table; });
    if (table == plan.variables.end())
      return caf::make_error(errc::protocol_error, "the chief's plan does not mark this worker's embedding table as one");
    const auto variable = static_cast<uint32_t>(table - plan.variables.begin());
    std::string layout = cat(variable, " ", plan.table_partition); // (what the row exchanges are made of)
    for (auto& part : plan.parts)
      if (part.variable == variable)
        layout += cat(" ", part.shard, ":", part.row_begin, "+", part.rows);
    if (!st.table->batches.empty() && layout != st.table->layout) // (a restarted chief's plan: row pulls may be out)
      return caf::make_error(errc::protocol_error, cat("the chief's plan puts the embedding table's parts elsewhere than "
                                                       "before (", layout, " against ", st.table->layout,
                                                       "); restart this worker"));
    if (st.table->batches.empty()) { // (the same plan again keeps them: the fetches out place their rows through them)
      st.table->variable = variable;
      st.table->layout = layout;
      const size_t slots = static_cast<size_t>(st.cfg.train.batch_size) * st.step->model().spec().input.size();
      // (async: nothing decides between a push's update and the next read of its rows but the
      // shard; a step computed ahead needs its rows asked back one push earlier. Sync: they are
      // read once the push's step is applied; ssp: when its answer goes, after any wait. A table
      // trains in no other mode: config/table_rules.)
      const size_t depth = st.cfg.cluster.rows_with_push ? 1 + static_cast<size_t>(st.cfg.cluster.overlap_steps) : 0;
      st.table->fetches = row_batches{depth};
      st.table->batches.resize(depth + 1);
      for (auto& b : st.table->batches)
        b.exchange = std::make_unique<row_exchange>(plan, variable, slots);
    }
    for (auto& part : plan.parts)
      if (part.variable == st.table->variable)
        st.pushes.carry_rows(part.shard, st.table->variable);
  }
  if (st.cfg.cluster.wire.value_compression == sparsifier::topk) {
    st.mirror.clear();
    for (auto& var : plan.variables)
      st.mirror.emplace_back(static_cast<size_t>(var.rows) * static_cast<size_t>(var.cols), 0.0f);
  }
  st.plan = std::move(plan);
  return caf::none;
}

caf::error join_group(worker_pointer self, const slice_group& group) {
  auto& st = self->state;
  const auto slices = st.cfg.cluster.slices;
  if (!st.cfg.cluster.model_parallel() || group.slices.size() != slices)
    return caf::make_error(errc::protocol_error, cat("the chief sent a group of ", group.slices.size(),
                                                     " slices; train.slices is ", slices));
  const auto mine = st.cfg.index % slices;
  st.peers.clear();
  for (size_t k = 0; k < group.slices.size(); ++k) // no handle to itself: it never sends to itself
    st.peers.push_back(k == mine ? worker_replica_actor{} : caf::actor_cast<worker_replica_actor>(group.slices[k]));
  log_line(st.tag, cat("slice ", mine, " of group ", group.group, " (workers ", group.group * slices, "..",
                       (group.group + 1) * slices - 1, ")"));
  return caf::none;
}

replica_control_config control_config(const worker_replica_config& cfg) {
  replica_control_config c;
  c.mode = cfg.cluster.mode;
  // (sync stops here: its own partition's epochs, or the chief's limit; async and ssp follow grants)
  c.max_steps = cfg.train.max_steps;
  if (!cfg.cluster.elastic.on && !cfg.cluster.in_graph() && cfg.data) {
    const auto rows = static_cast<int64_t>(cfg.data->train.rows);
    auto own = worker_step_budgets(cfg.cluster.mode, cfg.train.max_epochs, rows, cfg.train.batch_size,
                                   cfg.cluster.replicas_to_aggregate, cfg.cluster.replicas());
    const uint32_t replica = cfg.index / std::max<uint32_t>(1, cfg.cluster.slices);
    c.max_steps = replica < own.size()
                    ? (cfg.train.max_steps > 0 ? std::min(cfg.train.max_steps, own[replica]) : own[replica])
                    : step_budget(cfg.cluster.mode, cfg.train.max_steps, cfg.train.max_epochs, rows, cfg.train.batch_size,
                                  cfg.cluster.replicas_to_aggregate, cfg.cluster.replicas());
  }
  c.report_every = cfg.cluster.report_every;
  c.speaks_for_group = cfg.index % cfg.cluster.slices == 0; // every slice computes the same loss
  c.shards_recoverable = static_cast<bool>(cfg.reconnect_shard) && !cfg.cluster.model_parallel();
  c.chief_recoverable = static_cast<bool>(cfg.reconnect_chief);
  c.in_graph = cfg.cluster.in_graph();
  c.startup_timeout = cfg.cluster.startup_timeout;
  c.leased = cfg.cluster.elastic.on;
  c.index = cfg.index;
  c.batch_size = cfg.train.batch_size;
  c.overlap_steps = cfg.cluster.overlap_steps;
  c.scaling_workers = async_scaling_workers(cfg.cluster);
  return c;
}

} // namespace actorps::detail

namespace actorps {

worker_hello worker_hello_for(const train_settings& train, const std::string& placement, uint32_t shards,
                              const data_splits& data, uint32_t index, std::string host,
                              std::vector<std::string> devices) {
  worker_hello hello;
  hello.worker = index;
  hello.host = std::move(host);
  hello.byte_order_probe = {byte_order_probe_value};
  hello.model = model_signature(with_input(train.model, data.model_input()).variables());
  hello.placement = placement;
  hello.shards = shards;
  hello.devices = std::move(devices);
  return hello;
}

} // namespace actorps
