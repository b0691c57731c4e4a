// The cluster spec (TensorFlow's ClusterSpec: chief, ps and worker host:port lists), this node's
// role and index, the training mode and the cluster's deadlines, declared and validated once.
// Reference: docs/config.md.
#pragma once

#include "compute/optimizer_rules.hpp"
#include "config/strict_config.hpp"
#include "control/train_mode.hpp"
#include "model/partitioner.hpp"
#include "wire/gradient_encoder.hpp"

#include <caf/expected.hpp>
#include <caf/timespan.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace actorps {

/// A host and TCP port.
struct endpoint {
  std::string host;
  uint16_t port = 0;
  std::string str() const { return host + ":" + std::to_string(port); }
};

/// Parses "host:port"; nullopt for anything else (missing colon, port outside 1..65535).
std::optional<endpoint> parse_endpoint(const std::string& text);

/// What one process runs.
enum class node_role { local, chief, ps, worker, chief_worker, scopes };


/// Who drives the steps (train.replication): between-graph, every worker runs its own loop (the
/// modes above); in-graph, the chief drives every step and the workers compute the gradients of
/// the parts of one global batch it hands them (sync only).
enum class replication { between_graph, in_graph };

/// Returns the config spelling: "between-graph", "in-graph".
const char* to_string(replication r);

const char* to_string(node_role r);
std::optional<node_role> parse_node_role(const std::string& name);

/// The defaults that the options (cluster_values), the validated settings (run_settings,
/// cluster_settings) and a worker's part of them (worker_settings) share, written once.
namespace cluster_default {
inline constexpr std::chrono::seconds connect_timeout{30};
inline constexpr std::chrono::seconds startup_timeout{120};
inline constexpr std::chrono::seconds request_timeout{60};
inline constexpr std::chrono::seconds step_timeout{30};
inline constexpr int report_every = 50;
inline constexpr int64_t max_message_bytes = int64_t{64} << 20;
inline constexpr int64_t push_bucket_bytes = int64_t{256} << 10;
inline constexpr int overlap_steps = 0;
inline constexpr uint32_t max_slice_floats = static_cast<uint32_t>(max_message_bytes / sizeof(float));
inline constexpr uint64_t push_bucket_floats = static_cast<uint64_t>(push_bucket_bytes) / sizeof(float);
inline constexpr int slow_worker = -1;
inline constexpr double slowdown = 1.0;
} // namespace cluster_default

/// Raw option values as CAF fills them.
struct cluster_values {
  // [node]
  std::string role = "local";
  int index = 0;
  bool check_only = false;
  bool keep_alive = false;
  std::string drop_scope;
  std::string join;
  int metrics_port = 0;
  std::string metrics_address = "127.0.0.1";
  std::string cpus;
  // [cluster]
  std::string chief = "127.0.0.1:4250";
  std::vector<std::string> ps = {"127.0.0.1:4251"};
  std::vector<std::string> workers = {"127.0.0.1:4260", "127.0.0.1:4261"};
  std::string placement = "round-robin";
  std::string partitioner = "none";
  std::string table_partition = "div";
  caf::timespan connect_timeout = cluster_default::connect_timeout;
  caf::timespan startup_timeout = cluster_default::startup_timeout;
  caf::timespan request_timeout = cluster_default::request_timeout;
  int report_every = cluster_default::report_every;
  int64_t max_message_bytes = cluster_default::max_message_bytes;
  int64_t push_bucket_bytes = cluster_default::push_bucket_bytes;
  double push_early_ms = 1.0;
  int overlap_steps = cluster_default::overlap_steps;
  bool rows_with_push = true;
  caf::timespan step_timeout = cluster_default::step_timeout;
  caf::timespan stall_warn = std::chrono::seconds(10);
  std::string wire_precision = "fp32";
  std::string gradient_compression = "none";
  std::string value_compression = "none";
  double topk_ratio = 0.01;
  int64_t topk_warmup_steps = 0;
  bool momentum_correction = false;
  bool elastic = false;
  int min_workers = 1;
  int max_workers = 16;
  std::string elastic_aggregate = "all";
  int lease_batches = 10;
  // [train]
  std::string mode = "async";
  std::string replication = "between-graph";
  int replicas_to_aggregate = 0;
  int staleness = 0;
  int slices = 2;
  std::string async_lr_scaling = "inverse-workers";
  std::string async_momentum = "compensate";
  // [debug]
  int slow_worker = cluster_default::slow_worker;
  double slowdown = cluster_default::slowdown;
  bool tensor_stream = true;
  int64_t stream_min_bytes = 65536;
  int64_t stream_port_offset = 0;
  bool local_streams = true;
  bool local_shared_memory = true;
  // [security]
  bool tls = false;
  bool local_streams_tls = false;
  int64_t max_handshake_bytes = 65536;
  // [checkpoint]
  std::string checkpoint_dir;
  int64_t checkpoint_every_steps = 0;
  double checkpoint_every_seconds = 60.0;
  int checkpoint_keep = 3;
  bool checkpoint_restore = true;
};

/// Sync with elastic membership (cluster.elastic-aggregate): every live worker's gradient is
/// averaged (all), or train.replicas-to-aggregate of them with the rest as backups (fixed).
enum class elastic_aggregate { all, fixed };

/// Elastic membership (cluster.elastic): workers join and leave a running job.
struct elastic_settings {
  bool on = false;
  uint32_t min_workers = 1;   ///< below it training pauses (the chief hands out no data)
  uint32_t max_workers = 16;  ///< a join above it is refused (cluster_full)
  elastic_aggregate aggregate = elastic_aggregate::all;
  uint32_t lease_batches = 10; ///< batches per data lease the chief hands a worker
  std::optional<endpoint> join; ///< node.join: this worker joins the running job at this chief
};

/// The part of the validated cluster settings a run's chief uses: the cluster's shape and mode,
/// placement, timing, the wire, checkpoints and elastic membership (cluster_settings adds the
/// node's identity and what only workers, shards or the transport use).
struct run_settings {
  std::vector<endpoint> ps;
  std::vector<endpoint> workers;
  std::string placement; ///< validated name of a placement_strategy
  partitioner partition;  ///< how variables are split by rows before placement
  std::string table_partition = "div"; ///< an embedding table's rows over its parts: div or mod
  std::chrono::milliseconds startup_timeout{cluster_default::startup_timeout};
  std::chrono::milliseconds request_timeout{cluster_default::request_timeout};
  int report_every = cluster_default::report_every;
  uint32_t max_slice_floats = cluster_default::max_slice_floats; ///< from cluster.max-message-bytes
  std::chrono::milliseconds step_timeout{cluster_default::step_timeout};
  std::chrono::milliseconds stall_warn{10000}; ///< the chief's stall report after this without a global step (0: off)
  compression_settings wire;           ///< how workers' gradients and the shards' values travel
  train_mode mode = train_mode::async;
  replication replicate = replication::between_graph;
  uint32_t replicas_to_aggregate = 0;  ///< sync: gradients averaged per step (resolved: 1..workers)
  uint32_t staleness = 0;              ///< ssp: steps a worker may run ahead of the slowest
  uint32_t slices = 1;                 ///< model-parallel: K slices per group (1 otherwise)
  std::string checkpoint_dir;          ///< the chief's checkpoints ("": none)
  int64_t checkpoint_every_steps = 0;  ///< save every N global steps (0: by time only)
  double checkpoint_every_seconds = 60.0; ///< save every T seconds (0: by steps only)
  int checkpoint_keep = 3;             ///< regular checkpoints kept (plus the best)
  bool checkpoint_restore = true;      ///< start from the newest valid checkpoint in the dir
  elastic_settings elastic;

  /// Returns whether workers push through a SyncAggregator (sync and ssp).
  bool aggregated() const { return mode == train_mode::sync || mode == train_mode::ssp; }

  /// In-graph replication: the chief drives the steps; shards take its pushes, with no aggregator.
  bool in_graph() const { return replicate == replication::in_graph; }

  /// Model-parallel: workers g*K .. g*K+K-1 form group g, worker g*K+k holds slice k.
  bool model_parallel() const { return mode == train_mode::model_parallel; }

  /// Worker ids the shards accept: the configured workers', and with cluster.elastic up to
  /// max-workers more for joins (a joiner takes the lowest id no live member holds).
  uint32_t worker_ids() const {
    return static_cast<uint32_t>(workers.size()) + (elastic.on ? elastic.max_workers : 0u);
  }

  /// Returns the number of model replicas training on their own data: the groups in
  /// model-parallel mode, else the workers.
  uint32_t replicas() const { return static_cast<uint32_t>(workers.size()) / slices; }
};

/// The run's settings and what only workers (and the shards' optimizer rule) use beside them: the
/// part of the cluster settings a WorkerReplica gets (a slice of them, no field copied by hand).
struct worker_settings : run_settings {
  /// From cluster.push-bucket-bytes: a step's push to a shard goes out in parts of about this
  /// many gradient values as backprop completes them (0: one push after backprop).
  uint64_t push_bucket_floats = cluster_default::push_bucket_floats;
  /// cluster.push-early-ms: a part goes out before backprop ends only where, over the worker's
  /// first steps, backprop had at least this long left after it (0: every part early).
  std::chrono::microseconds push_early{1000};
  /// cluster.overlap-steps: async and ssp workers compute the next step while a step's exchange travels.
  int overlap_steps = cluster_default::overlap_steps;
  /// cluster.rows-with-push: workers with an embedding table ask each push's shard back for the
  /// next batch's rows (push_request::reads) instead of pulling them before the step.
  bool rows_with_push = true;
  /// cluster.momentum-correction: with top-k, workers keep the momentum (Lin et al., "Deep
  /// Gradient Compression", 2018) and shards apply plain SGD (see shard_optimizer).
  bool momentum_correction = false;
  bool scale_lr_by_workers = true;
  bool compensate_momentum = true;
  int slow_worker = cluster_default::slow_worker; ///< debug: this worker sleeps to run `slowdown` times slower
  double slowdown = cluster_default::slowdown;
};

/// Validated cluster settings: the worker's and the node's own (its role and index, metrics,
/// connect timeout, TLS and the tensor stream's transport).
struct cluster_settings : worker_settings {
  node_role role = node_role::local;
  uint32_t index = 0;
  bool keep_alive = false; ///< ps: the chief's stop ends its session; the shard keeps its scopes
  std::string drop_scope;  ///< scopes role: drop this scope of ps node.index (else list them)
  uint16_t metrics_port = 0;        ///< node.metrics-port: serve Prometheus' /metrics here (0: off)
  std::string metrics_address;      ///< node.metrics-address: the address it binds to
  std::vector<int> cpus;            ///< node.cpus: the CPUs this process runs on (none: not pinned)
  endpoint chief;
  std::chrono::milliseconds connect_timeout{cluster_default::connect_timeout};
  bool tls = false;                    ///< every connection is TLS with CA-signed certificates
  bool tensor_stream = true;           ///< cluster.tensor-stream: workers' tensors travel on a stream beside BASP
  uint64_t stream_min_bytes = 65536; ///< cluster.stream-min-bytes: smaller transfers stay inside their typed message
  uint16_t stream_port_offset = 0;     ///< cluster.stream-port-offset: a ps node's stream port is its port + this (0: any free one)
  bool local_streams = true;           ///< cluster.local-streams: a worker on its ps node's host streams over a Unix-domain socket
  bool local_shared_memory = true;  ///< cluster.local-shared-memory: its pushes' gradients through its shared heap
  bool local_streams_tls = false;      ///< security.local-streams-tls: that socket speaks TLS too (with security.tls)
  uint32_t max_handshake_bytes = 65536; ///< largest BASP payload a peer may announce before its handshake
};

/// The W of async scaling below: the replicas (model-parallel: the groups). In elastic jobs each
/// async or ssp worker scales its gradients by W / live workers, so the learning rate follows
/// the membership (the momentum stays compensated for W).
uint32_t async_scaling_workers(const run_settings& cluster);

/// Returns the optimizer the shards apply. Sync: base unchanged. Async and ssp with W > 1 workers
/// (every worker's push is applied on its own): the learning rate
/// is divided by W (train.async-lr-scaling = inverse-workers) and, with train.async-momentum =
/// compensate, the momentum becomes max(0, 1 - (1 - momentum) * W), because asynchrony itself
/// adds momentum of about 1 - 1/W (Mitliagkas et al., "Asynchrony begets momentum", 2016).
/// Otherwise base unchanged. With cluster.momentum-correction the workers apply the momentum
/// before top-k, so the shards use plain SGD (the same learning rate rule).
optimizer_params shard_optimizer(const optimizer_params& base, const worker_settings& cluster);

/// The momentum of that rule: base.momentum, compensated as above for async and ssp.
float applied_momentum(const optimizer_params& base, const worker_settings& cluster);

/// How a worker's gradients and values travel: the cluster's wire settings, with the momentum the
/// workers apply under cluster.momentum-correction (the shards then apply plain SGD).
compression_settings worker_wire(const worker_settings& cluster, const optimizer_params& optimizer);

/// Checks what the cluster settings demand of the optimizer: cluster.momentum-correction needs
/// train.optimizer = momentum (the error names both keys).
caf::error check_optimizer(const worker_settings& cluster, const optimizer_params& optimizer);

/// The openssl.* settings of CAF's config (file paths; passphrase optional).
struct tls_files {
  std::string certificate;
  std::string key;
  std::string cafile;
  std::string passphrase;
};

/// With tls: certificate, key and cafile must be set and readable (errors name the key and the
/// file). Without: none of them may be set (CAF would abort on a CA file without a certificate).
caf::error validate_tls(bool tls, const tls_files& files);

/// Declares the [node], [cluster] and [train] mode options on cfg.
void declare_cluster_options(strict_config& cfg, cluster_values& values);

/// Checks the spec: endpoints parse, this node's index exists for its role, no two nodes share a
/// host:port, known role, mode and placement; errors name the key.
caf::expected<cluster_settings> validate(const cluster_values& values);

} // namespace actorps
