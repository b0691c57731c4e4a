// Declaration and validation of the cluster options.
#include "config/cluster_options.hpp"
#include "config/cpu_list.hpp"

#include "common/enum_names.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <fstream>
#include <map>

namespace actorps {

std::optional<endpoint> parse_endpoint(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    return std::nullopt;
  std::string port_text = text.substr(colon + 1);
  if (port_text.find_first_not_of("0123456789") != std::string::npos || port_text.size() > 5)
    return std::nullopt;
  int port = std::stoi(port_text);
  if (port < 1 || port > 65535)
    return std::nullopt;
  return endpoint{text.substr(0, colon), static_cast<uint16_t>(port)};
}

const char* to_string(node_role r) {
  switch (r) {
    case node_role::local: return "local";
    case node_role::chief: return "chief";
    case node_role::ps: return "ps";
    case node_role::worker: return "worker";
    case node_role::chief_worker: return "chief-worker";
    case node_role::scopes: return "scopes";
  }
  return "unknown";
}

std::optional<node_role> parse_node_role(const std::string& name) {
  constexpr node_role all[] = {node_role::local, node_role::chief, node_role::ps, node_role::worker,
                               node_role::chief_worker, node_role::scopes};
  return parse_by_name(name, all);
}

const char* to_string(replication r) {
  return r == replication::in_graph ? "in-graph" : "between-graph";
}

void declare_cluster_options(strict_config& cfg, cluster_values& v) {
  cfg.group("node")
    .add(v.role, "role", "local (the whole cluster in one process), chief, ps, worker, chief-worker (the chief and worker 0 in one process, as TF1's chief worker) or scopes (list, or drop, the variable scopes ps node.index holds)")
    .add(v.index, "index", "this node's task index within its role")
    .add(v.check_only, "check-only", "validate the configuration (exit 0 or 2 with the error) and stop")
    .add(v.keep_alive, "keep-alive", "ps: outlive the run; the chief's stop ends its session and the shard keeps every scope's variables")
    .add(v.drop_scope, "drop-scope", "with node.role = scopes: drop this scope (refused while a session trains it)")
    .add(v.join, "join", "worker: join the running elastic job of the chief at this host:port (the chief assigns the index; node.index is not used)")
    .add(v.metrics_port, "metrics-port", "serve Prometheus' /metrics (read-only HTTP) on this port (0: off)")
    .add(v.metrics_address, "metrics-address", "the address node.metrics-port binds to")
    .add(v.cpus, "cpus", "the CPUs this node's process runs on, as a CPU list (\"0\", \"0-3\", \"0,2\"; \"\": not pinned)");
  cfg.group("cluster")
    .add(v.chief, "chief", "the chief's host:port")
    .add(v.ps, "ps", "parameter shards' host:port list")
    .add(v.workers, "workers", "workers' host:port list")
    .add(v.placement, "placement", "round-robin (replica_device_setter) or balanced")
    .add(v.partitioner, "partitioner", "none, fixed:K (every variable in K row parts) or max-bytes:B (parts of at most B bytes); parts are placed like variables")
    .add(v.table_partition, "table-partition", "an embedding table's rows over its part on each shard: div (ranges) or mod (row r on part r mod shards)")
    .add(v.connect_timeout, "connect-timeout", "how long a node retries reaching a peer")
    .add(v.startup_timeout, "startup-timeout", "how long the chief waits for workers, a shard for its setup")
    .add(v.request_timeout, "request-timeout", "deadline of every pull, push and evaluation request")
    .add(v.report_every, "report-every", "worker progress reports every N steps")
    .add(v.max_message_bytes, "max-message-bytes", "largest tensor payload of one message")
    .add(v.tensor_stream, "tensor-stream", "workers' pulls and pushes carry their tensors on a stream beside the typed messages (a ps node's second port), not inside them; off: everything over BASP")
    .add(v.stream_min_bytes, "stream-min-bytes", "tensor-stream: a pull's or push's tensors of fewer bytes than this travel inside its typed message (a frame costs each node a thread wake-up); 0: every tensor on the stream")
    .add(v.stream_port_offset, "stream-port-offset", "tensor-stream: a ps node listens for streams at its cluster.ps port plus this (for firewalls and pod specs); 0: any free port, offered to the workers over BASP")
    .add(v.local_streams, "local-streams", "tensor-stream: a ps node also listens at a Unix-domain socket of its host, and a worker on that host (same network namespace) streams over it instead of TCP; a worker elsewhere takes the port (both ends must allow it)")
    .add(v.local_shared_memory, "local-shared-memory", "local-streams: a worker's pushes to a ps node of its host leave their gradients in the worker's shared heap (a memfd sealed to its size that the ps node maps), where the ps node applies them and writes the values each push asks back, instead of both crossing the socket; off, or where the ps node cannot map it: frames (both ends must allow it)")
    .add(v.push_bucket_bytes, "push-bucket-bytes", "workers push a step's gradients in parts of about this many bytes as backprop completes them, overlapping the rest of backprop (0: one push per shard after backprop)")
    .add(v.push_early_ms, "push-early-ms", "push-bucket-bytes: a part goes out before backprop ends only where, over each worker's first steps, backprop had at least this many ms left after it; the others join the step's last push (0: every part as soon as backprop completes it)")
    .add(v.overlap_steps, "overlap-steps", "async, ssp: 1 computes each worker's next step on the values it holds while this step's pushes and the replies with the next values travel (one step more staleness); 0: a step waits for its values")
    .add(v.rows_with_push, "rows-with-push", "an embedding table: each push asks its shard back for the rows of the worker's next batch, read after the push's update (sync: once its step is applied; ssp: as its answer goes, after any wait; one round trip a step less); false: the rows are pulled before each step")
    .add(v.step_timeout, "step-timeout", "sync/ssp: how long a step waits for a worker before going on without it")
    .add(v.stall_warn, "stall-warn", "the chief logs whom it waits for after this long without a global step (0s: off)")
    .add(v.wire_precision, "wire-precision", "fp32, bf16 or fp16: how gradients and values travel (shards keep fp32)")
    .add(v.gradient_compression, "gradient-compression", "none or topk (each pushed slice's largest gradients, with error feedback)")
    .add(v.value_compression, "value-compression", "none or topk (async, ssp: shards answer with the top-k of each slice's change since the worker's last values)")
    .add(v.topk_ratio, "topk-ratio", "topk: the share of each slice's gradient values sent, in (0, 1]")
    .add(v.topk_warmup_steps, "topk-warmup-steps", "gradient-compression topk: over the first N global steps the share sent falls geometrically from 0.25 to topk-ratio (DGC's warm-up; 0: none)")
    .add(v.momentum_correction, "momentum-correction", "gradient-compression topk: workers apply the momentum before top-k and clear it where they send (DGC); shards apply plain SGD")
    .add(v.elastic, "elastic", "workers may join (node.join) and leave (SIGTERM) the running job; the chief hands out the data in leases")
    .add(v.min_workers, "min-workers", "elastic: below this many live workers training pauses")
    .add(v.max_workers, "max-workers", "elastic: a join above this many live workers is refused")
    .add(v.elastic_aggregate, "elastic-aggregate", "elastic sync: all (every live worker's gradient per step) or fixed (train.replicas-to-aggregate; the rest are backups)")
    .add(v.lease_batches, "lease-batches", "elastic: batches in one data lease (a leaving or crashed worker's unfinished lease goes to others)");
  cfg.group("train")
    .add(v.mode, "mode", "async, sync (SyncReplicasOptimizer), ssp (bounded staleness) or model-parallel")
    .add(v.replication, "replication", "between-graph (every worker runs its own steps) or in-graph (sync: the chief drives "
                                       "each step, splitting one global batch of workers x batch-size among the workers)")
    .add(v.slices, "slices", "model-parallel: vertical slices per model replica (workers are groups of this many)")
    .add(v.replicas_to_aggregate, "replicas-to-aggregate", "sync: gradients averaged per step (0: all workers; fewer: the rest are backups)")
    .add(v.staleness, "staleness", "ssp: steps a worker may run ahead of the slowest")
    .add(v.async_lr_scaling, "async-lr-scaling", "inverse-workers (lr / workers in async mode) or none")
    .add(v.async_momentum, "async-momentum", "compensate (1 - (1 - momentum) * workers in async mode) or none");
  cfg.group("checkpoint")
    .add(v.checkpoint_dir, "dir", "directory of the chief's checkpoints (empty: no checkpoints)")
    .add(v.checkpoint_every_steps, "every-steps", "save every N global steps (0: by time only)")
    .add(v.checkpoint_every_seconds, "every-seconds", "save every T seconds of training (0: by steps only)")
    .add(v.checkpoint_keep, "keep", "regular checkpoints kept; the best-validation one is kept apart")
    .add(v.checkpoint_restore, "restore", "start from the newest valid checkpoint in checkpoint.dir");
  cfg.group("security")
    .add(v.tls, "tls", "TLS with mutual authentication on every connection (needs openssl.certificate, .key, .cafile)")
    .add(v.local_streams_tls, "local-streams-tls", "tls: a worker's tensor stream to a ps node of its host over the local socket (cluster.local-streams) is TLS too; false: plain, since it never leaves the host, and each end checks that the other runs as its own user (the stream's token still comes over TLS)")
    .add(v.max_handshake_bytes, "max-handshake-bytes",
         "largest message a peer may announce before its handshake; a larger one closes the connection");
  cfg.group("debug")
    .add(v.slow_worker, "slow-worker", "index of a worker to slow down (-1: none)")
    .add(v.slowdown, "slowdown", "how many times slower the slow worker runs (it sleeps after each step)");
}

namespace {

// The key under which two endpoints are one address: IP literals in their canonical form and
// "localhost" as 127.0.0.1, so localhost:P and 127.0.0.1:P count as the same port. (Other names
// are compared as written: resolving them here could wait on a name server.)
std::string same_address(const endpoint& ep) {
  std::string host = ep.host == "localhost" ? "127.0.0.1" : ep.host;
  unsigned char raw[sizeof(in6_addr)];
  char text[INET6_ADDRSTRLEN];
  for (int family : {AF_INET, AF_INET6})
    if (inet_pton(family, host.c_str(), raw) == 1 && inet_ntop(family, raw, text, sizeof(text)))
      host = text;
  return host + ":" + std::to_string(ep.port);
}

caf::error bad(const std::string& key, const std::string& rule) {
  return caf::make_error(errc::invalid_config, key + " " + rule);
}

caf::error parse_list(const std::vector<std::string>& texts, const char* key, std::vector<endpoint>& out) {
  for (size_t i = 0; i < texts.size(); ++i) {
    auto ep = parse_endpoint(texts[i]);
    if (!ep)
      return bad(key, cat("entry ", i, " \"", texts[i], "\" is not host:port"));
    out.push_back(*ep);
  }
  return caf::none;
}

// cluster.elastic and node.join.
caf::error validate_elastic(const cluster_values& v, cluster_settings& s) {
  auto& e = s.elastic;
  const auto workers = static_cast<int>(s.workers.size());
  if (!v.join.empty()) {
    auto at = parse_endpoint(v.join);
    if (!at)
      return bad("node.join", cat("\"", v.join, "\" is not host:port (the chief's address)"));
    if (s.role != node_role::worker)
      return bad("node.join", cat("is for node.role = worker, not ", v.role));
    if (!v.elastic)
      return bad("node.join", "needs cluster.elastic: a fixed cluster takes only the workers it lists");
    e.join = *at;
    s.chief = *at;
  }
  if (!v.elastic)
    return caf::none;
  e.on = true;
  if (s.model_parallel())
    return bad("cluster.elastic", "does not work with train.mode = model-parallel: a group cannot go on without a slice");
  if (s.in_graph())
    return bad("cluster.elastic", "works with between-graph replication only (train.replication = in-graph cuts the "
                                  "global batch among the configured workers)");
  if (v.min_workers < 1 || v.min_workers > workers)
    return bad("cluster.min-workers", cat("must be in [1, ", workers, "] (the workers cluster.workers lists start the "
                                          "job), got ", v.min_workers));
  if (v.max_workers < workers || v.max_workers > 4096)
    return bad("cluster.max-workers", cat("must be in [", workers, ", 4096] (at least the ", workers,
                                          " workers cluster.workers lists), got ", v.max_workers));
  e.min_workers = static_cast<uint32_t>(v.min_workers);
  e.max_workers = static_cast<uint32_t>(v.max_workers);
  if (v.elastic_aggregate == "all")
    e.aggregate = elastic_aggregate::all;
  else if (v.elastic_aggregate == "fixed")
    e.aggregate = elastic_aggregate::fixed;
  else
    return bad("cluster.elastic-aggregate", cat("must be all or fixed, got \"", v.elastic_aggregate, "\""));
  if (v.lease_batches < 1 || v.lease_batches > 100000)
    return bad("cluster.lease-batches", cat("must be in [1, 100000], got ", v.lease_batches));
  e.lease_batches = static_cast<uint32_t>(v.lease_batches);
  if (s.mode == train_mode::sync && e.aggregate == elastic_aggregate::all)
    s.replicas_to_aggregate = s.worker_ids(); // every live worker: the rule takes min(this, live)
  return caf::none;
}

// node.role and node.index, the cluster's nodes (each its own host:port), train.mode, the
// placement and the partitioner.
caf::error validate_topology(const cluster_values& v, cluster_settings& s) {
  auto role = parse_node_role(v.role);
  if (!role)
    return bad("node.role", cat("must be local, chief, ps, worker, chief-worker or scopes, got \"", v.role, "\""));
  s.role = *role;
  if (v.index < 0)
    return bad("node.index", cat("must be >= 0, got ", v.index));
  s.index = static_cast<uint32_t>(v.index);
  auto chief = parse_endpoint(v.chief);
  if (!chief)
    return bad("cluster.chief", cat("\"", v.chief, "\" is not host:port"));
  s.chief = *chief;
  if (auto err = parse_list(v.ps, "cluster.ps", s.ps))
    return err;
  if (auto err = parse_list(v.workers, "cluster.workers", s.workers))
    return err;
  if (s.ps.empty())
    return bad("cluster.ps", "must list at least one parameter shard");
  if (s.workers.empty())
    return bad("cluster.workers", "must list at least one worker");
  s.keep_alive = v.keep_alive;
  s.drop_scope = v.drop_scope;
  if ((s.role == node_role::ps || s.role == node_role::scopes) && s.index >= s.ps.size())
    return bad("node.index", cat("is ", s.index, " but cluster.ps lists ", s.ps.size(), " shards"));
  if (s.role == node_role::worker && v.join.empty() && s.index >= s.workers.size())
    return bad("node.index", cat("is ", s.index, " but cluster.workers lists ", s.workers.size(), " workers"));
  if (s.role == node_role::chief && s.index != 0)
    return bad("node.index", cat("of the chief must be 0, got ", s.index));
  if (s.role == node_role::chief_worker && s.index != 0)
    return bad("node.index", cat("of the chief-worker must be 0 (worker 0 runs the chief), got ", s.index));
  auto mode = parse_train_mode(v.mode);
  if (!mode)
    return bad("train.mode", cat("must be async, sync, ssp or model-parallel, got \"", v.mode, "\""));
  s.mode = *mode;
  // Workers listen only in model-parallel mode: elsewhere the chief may use worker 0's address
  // (TF1's layout, where worker 0 is the chief).
  const bool chief_at_worker0 = !s.model_parallel() && same_address(s.chief) == same_address(s.workers[0]);
  std::map<std::string, std::string> seen{{same_address(s.chief), s.chief.str()}};
  for (auto* list : {&s.ps, &s.workers})
    for (auto& ep : *list)
      if (chief_at_worker0 && &ep == &s.workers[0])
        continue;
      else if (auto [at, fresh] = seen.emplace(same_address(ep), ep.str()); !fresh)
        return bad("cluster", at->second == ep.str()
                                ? cat("lists ", ep.str(), " twice: every node needs its own host:port")
                                : cat("lists ", at->second, " and ", ep.str(),
                                      ", the same address twice: every node needs its own host:port"));
  if (v.placement != "round-robin" && v.placement != "balanced")
    return bad("cluster.placement", cat("must be round-robin or balanced, got \"", v.placement, "\""));
  s.placement = v.placement;
  auto split = parse_partitioner(v.partitioner);
  if (!split)
    return bad("cluster.partitioner", cat("must be none, fixed:K or max-bytes:B with K, B >= 1, got \"", v.partitioner, "\""));
  s.partition = *split;
  if (v.table_partition != "div" && v.table_partition != "mod")
    return bad("cluster.table-partition", cat("must be div or mod, got \"", v.table_partition, "\""));
  s.table_partition = v.table_partition;
  return caf::none;
}

// The deadlines: connect, start-up, request and step timeouts, the report interval, the stall
// warning.
caf::error validate_timing(const cluster_values& v, cluster_settings& s) {
  using ms = std::chrono::milliseconds;
  s.connect_timeout = std::chrono::duration_cast<ms>(v.connect_timeout);
  s.startup_timeout = std::chrono::duration_cast<ms>(v.startup_timeout);
  s.request_timeout = std::chrono::duration_cast<ms>(v.request_timeout);
  for (auto [key, value] : {std::pair{"cluster.connect-timeout", s.connect_timeout},
                            std::pair{"cluster.startup-timeout", s.startup_timeout},
                            std::pair{"cluster.request-timeout", s.request_timeout}})
    if (value.count() <= 0)
      return bad(key, "must be positive, e.g. 30s");
  if (v.report_every <= 0)
    return bad("cluster.report-every", cat("must be > 0, got ", v.report_every));
  s.report_every = v.report_every;
  s.step_timeout = std::chrono::duration_cast<ms>(v.step_timeout);
  if (s.step_timeout.count() <= 0)
    return bad("cluster.step-timeout", "must be positive, e.g. 30s");
  if (v.stall_warn.count() < 0)
    return bad("cluster.stall-warn", "must be >= 0s (0s: off), e.g. 10s");
  s.stall_warn = std::chrono::duration_cast<ms>(v.stall_warn);
  return caf::none;
}

// What travels how: message and handshake sizes, push buckets, TLS, the tensor stream.
caf::error validate_transport(const cluster_values& v, cluster_settings& s) {
  if (v.max_message_bytes < 1024 || v.max_message_bytes > (int64_t{1} << 30))
    return bad("cluster.max-message-bytes", cat("must be in [1024, 1073741824], got ", v.max_message_bytes));
  s.max_slice_floats = static_cast<uint32_t>(v.max_message_bytes / static_cast<int64_t>(sizeof(float)));
  if (v.push_bucket_bytes < 0)
    return bad("cluster.push-bucket-bytes", cat("must be >= 0 (0: one push after backprop), got ", v.push_bucket_bytes));
  s.push_bucket_floats = static_cast<uint64_t>(v.push_bucket_bytes + static_cast<int64_t>(sizeof(float)) - 1) / sizeof(float);
  if (!(v.push_early_ms >= 0.0 && v.push_early_ms <= 60'000.0))
    return bad("cluster.push-early-ms", cat("must be in [0, 60000] (0: every part as soon as backprop completes it), got ",
                                            v.push_early_ms));
  s.push_early = std::chrono::microseconds{static_cast<int64_t>(v.push_early_ms * 1000.0)};
  if (v.max_handshake_bytes < 4096 || v.max_handshake_bytes > (int64_t{1} << 24))
    return bad("security.max-handshake-bytes", cat("must be in [4096, 16777216], got ", v.max_handshake_bytes));
  s.max_handshake_bytes = static_cast<uint32_t>(v.max_handshake_bytes);
  s.tls = v.tls;
  s.tensor_stream = v.tensor_stream;
  if (v.stream_min_bytes < 0)
    return bad("cluster.stream-min-bytes", cat("must be >= 0 (0: every tensor on the stream), got ", v.stream_min_bytes));
  s.stream_min_bytes = static_cast<uint64_t>(v.stream_min_bytes);
  if (v.stream_port_offset < 0 || v.stream_port_offset > 65535)
    return bad("cluster.stream-port-offset", cat("must be in [0, 65535] (0: any free port), got ", v.stream_port_offset));
  for (auto& ep : s.ps)
    if (v.stream_port_offset > 0 && ep.port + v.stream_port_offset > 65535)
      return bad("cluster.stream-port-offset", cat("puts the stream port of the ps node at ", ep.str(), " above 65535"));
  s.stream_port_offset = static_cast<uint16_t>(v.stream_port_offset);
  s.local_streams = v.local_streams;
  s.local_shared_memory = v.local_shared_memory;
  s.local_streams_tls = v.local_streams_tls;
  return caf::none;
}

// The data-parallel rules: slices, replicas to aggregate, staleness, the async learning rate and
// momentum.
caf::error validate_training(const cluster_values& v, cluster_settings& s) {
  const auto workers = static_cast<int>(s.workers.size());
  if (s.model_parallel()) {
    if (v.slices < 1 || workers % v.slices != 0)
      return bad("train.slices", cat("must be >= 1 and divide the ", workers, " workers (groups of slices), got ",
                                     v.slices));
    s.slices = static_cast<uint32_t>(v.slices);
  }
  if (v.replicas_to_aggregate < 0 || v.replicas_to_aggregate > workers)
    return bad("train.replicas-to-aggregate", cat("must be in [0, ", workers, "] (0: all ", workers,
                                                  " workers), got ", v.replicas_to_aggregate));
  s.replicas_to_aggregate = static_cast<uint32_t>(v.replicas_to_aggregate == 0 ? workers : v.replicas_to_aggregate);
  if (v.staleness < 0)
    return bad("train.staleness", cat("must be >= 0, got ", v.staleness));
  s.staleness = static_cast<uint32_t>(v.staleness);
  if (v.async_lr_scaling != "inverse-workers" && v.async_lr_scaling != "none")
    return bad("train.async-lr-scaling", cat("must be inverse-workers or none, got \"", v.async_lr_scaling, "\""));
  s.scale_lr_by_workers = v.async_lr_scaling == "inverse-workers";
  if (v.async_momentum != "compensate" && v.async_momentum != "none")
    return bad("train.async-momentum", cat("must be compensate or none, got \"", v.async_momentum, "\""));
  s.compensate_momentum = v.async_momentum == "compensate";
  if (v.overlap_steps < 0 || v.overlap_steps > 1)
    return bad("cluster.overlap-steps", cat("must be 0 or 1, got ", v.overlap_steps));
  if (v.overlap_steps > 0 && ((s.mode != train_mode::async && s.mode != train_mode::ssp) || s.in_graph() || v.elastic))
    return bad("cluster.overlap-steps", "works with train.mode = async or ssp, between-graph and not elastic only (sync "
                                        "steps wait for every worker, in-graph steps for the chief, elastic ones for leases)");
  s.overlap_steps = v.overlap_steps;
  s.rows_with_push = v.rows_with_push;
  return caf::none;
}

// The wire encodings (precision, top-k and its remedies) and in-graph replication, which moves
// fp32 gradients uncompressed.
caf::error validate_wire(const cluster_values& v, cluster_settings& s) {
  const auto workers = static_cast<int>(s.workers.size());
  auto precision = parse_wire_precision(v.wire_precision);
  if (!precision)
    return bad("cluster.wire-precision", cat("must be fp32, bf16 or fp16, got \"", v.wire_precision, "\""));
  auto compression = parse_sparsifier(v.gradient_compression);
  if (!compression)
    return bad("cluster.gradient-compression", cat("must be none or topk, got \"", v.gradient_compression, "\""));
  auto value_compression = parse_sparsifier(v.value_compression);
  if (!value_compression)
    return bad("cluster.value-compression", cat("must be none or topk, got \"", v.value_compression, "\""));
  if (*value_compression == sparsifier::topk && s.mode != train_mode::async && s.mode != train_mode::ssp)
    return bad("cluster.value-compression", cat("topk needs train.mode async or ssp (every worker gets its own "
                                                "values), not ", v.mode));
  if (v.replication == "in-graph") {
    s.replicate = replication::in_graph;
    if (s.mode != train_mode::sync)
      return bad("train.replication", cat("in-graph steps are synchronous: it needs train.mode = sync, not ", v.mode));
    if (s.replicas_to_aggregate != static_cast<uint32_t>(workers))
      return bad("train.replicas-to-aggregate", cat("in-graph replication averages every part of the global batch: "
                                                    "leave it 0 (backup workers are between-graph only), got ",
                                                    v.replicas_to_aggregate));
    if (*precision != wire_precision::fp32 || *compression != sparsifier::none)
      return bad(*precision != wire_precision::fp32 ? "cluster.wire-precision" : "cluster.gradient-compression",
                 "in-graph replication moves fp32 gradients uncompressed: leave it at its default");
  } else if (v.replication != "between-graph") {
    return bad("train.replication", cat("must be between-graph or in-graph, got \"", v.replication, "\""));
  }
  if (!(v.topk_ratio > 0.0 && v.topk_ratio <= 1.0))
    return bad("cluster.topk-ratio", cat("must be in (0, 1], got ", v.topk_ratio));
  s.wire = {*precision, *compression, v.topk_ratio, *value_compression};
  if (v.topk_warmup_steps < 0)
    return bad("cluster.topk-warmup-steps", cat("must be >= 0 (0: no warm-up), got ", v.topk_warmup_steps));
  if (v.topk_warmup_steps > 0 && *compression != sparsifier::topk)
    return bad("cluster.topk-warmup-steps", "needs cluster.gradient-compression = topk");
  s.wire.topk_warmup_steps = static_cast<uint64_t>(v.topk_warmup_steps);
  if (v.momentum_correction && *compression != sparsifier::topk)
    return bad("cluster.momentum-correction", "needs cluster.gradient-compression = topk");
  s.momentum_correction = v.momentum_correction;
  return caf::none;
}

// The metrics endpoint and the debugging slowdown.
caf::error validate_observing(const cluster_values& v, cluster_settings& s) {
  const auto workers = static_cast<int>(s.workers.size());
  if (v.metrics_port < 0 || v.metrics_port > 65535)
    return bad("node.metrics-port", cat("must be in [0, 65535] (0: off), got ", v.metrics_port));
  if (v.metrics_port > 0 && v.metrics_address.empty())
    return bad("node.metrics-address", "must not be empty when node.metrics-port is set");
  s.metrics_port = static_cast<uint16_t>(v.metrics_port);
  s.metrics_address = v.metrics_address;
  auto cpus = parse_cpu_list(v.cpus);
  if (!cpus)
    return std::move(cpus.error());
  s.cpus = std::move(*cpus);
  if (v.slow_worker < -1 || v.slow_worker >= workers)
    return bad("debug.slow-worker", cat("must be -1 or a worker index below ", workers, ", got ", v.slow_worker));
  if (!(v.slowdown >= 1.0))
    return bad("debug.slowdown", cat("must be >= 1.0, got ", v.slowdown));
  s.slow_worker = v.slow_worker;
  s.slowdown = v.slowdown;
  return caf::none;
}

// checkpoint.*: intervals, how many to keep, where.
caf::error validate_checkpoints(const cluster_values& v, cluster_settings& s) {
  if (v.checkpoint_every_steps < 0)
    return bad("checkpoint.every-steps", cat("must be >= 0, got ", v.checkpoint_every_steps));
  if (!(v.checkpoint_every_seconds >= 0.0))
    return bad("checkpoint.every-seconds", cat("must be >= 0, got ", v.checkpoint_every_seconds));
  if (v.checkpoint_keep < 1)
    return bad("checkpoint.keep", cat("must be >= 1, got ", v.checkpoint_keep));
  if (!v.checkpoint_dir.empty() && v.checkpoint_every_steps == 0 && v.checkpoint_every_seconds == 0.0)
    return bad("checkpoint.every-steps", "and checkpoint.every-seconds are both 0, so checkpoint.dir would stay empty");
  s.checkpoint_dir = v.checkpoint_dir;
  s.checkpoint_every_steps = v.checkpoint_every_steps;
  s.checkpoint_every_seconds = v.checkpoint_every_seconds;
  s.checkpoint_keep = v.checkpoint_keep;
  s.checkpoint_restore = v.checkpoint_restore;
  return caf::none;
}

} // namespace

caf::expected<cluster_settings> validate(const cluster_values& v) {
  cluster_settings s;
  for (auto check : {validate_topology, validate_timing, validate_transport, validate_training, validate_wire,
                     validate_observing, validate_checkpoints, validate_elastic})
    if (auto err = check(v, s))
      return err;
  return s;
}

caf::error validate_tls(bool tls, const tls_files& files) {
  std::pair<const char*, const std::string*> required[] = {
    {"openssl.certificate", &files.certificate}, {"openssl.key", &files.key}, {"openssl.cafile", &files.cafile}};
  for (auto [key, path] : required) {
    if (!tls) {
      if (!path->empty())
        return bad(key, cat("is set (\"", *path, "\") but security.tls is false: set security.tls = true or remove it"));
      continue;
    }
    if (path->empty())
      return bad(key, "must name a file when security.tls = true (scripts/make-certs.sh makes them)");
    std::ifstream in{*path};
    if (!in)
      return bad(key, cat("names \"", *path, "\", which cannot be read"));
  }
  return caf::none;
}

uint32_t async_scaling_workers(const run_settings& cluster) {
  return cluster.replicas();
}

// Asynchrony begets momentum (Mitliagkas et al., 2016): W updates in flight at once act as an
// implicit momentum of about 1 - 1/W, which the shards' explicit one makes room for. Each worker
// has 1 + cluster.overlap-steps steps in flight.
float applied_momentum(const optimizer_params& base, const worker_settings& cluster) {
  auto in_flight = static_cast<float>(async_scaling_workers(cluster)) * static_cast<float>(1 + cluster.overlap_steps);
  if (cluster.mode == train_mode::sync || in_flight < 2.0f || !cluster.compensate_momentum)
    return base.momentum;
  return std::max(0.0f, 1.0f - (1.0f - base.momentum) * in_flight);
}

optimizer_params shard_optimizer(const optimizer_params& base, const worker_settings& cluster) {
  optimizer_params p = base;
  if (cluster.momentum_correction) // the workers keep the momentum
    p.kind = optimizer_kind::sgd;
  p.momentum = applied_momentum(base, cluster);
  auto workers = static_cast<float>(async_scaling_workers(cluster));
  // ssp applies pushes one by one, like async
  if (cluster.mode != train_mode::sync && workers >= 2.0f && cluster.scale_lr_by_workers)
    p.learning_rate /= workers;
  return p;
}

compression_settings worker_wire(const worker_settings& cluster, const optimizer_params& optimizer) {
  auto wire = cluster.wire;
  if (cluster.momentum_correction)
    wire.momentum = applied_momentum(optimizer, cluster);
  return wire;
}

caf::error check_optimizer(const worker_settings& cluster, const optimizer_params& optimizer) {
  if (cluster.momentum_correction && optimizer.kind != optimizer_kind::momentum)
    return caf::make_error(errc::invalid_config, cat("cluster.momentum-correction needs train.optimizer = momentum, got ",
                                                     to_string(optimizer.kind)));
  return caf::none;
}

} // namespace actorps
