// Tests of config/cluster_options: the cluster spec's validation and the async optimizer rule.
#include "config/cluster_options.hpp"

#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>

using namespace actorps;

namespace {

// Validating the defaults changed by `mutate` fails with invalid_config naming `text`.
template <class Mutate>
void expect(Mutate mutate, const std::string& text) {
  actorps::cluster_values v;
  mutate(v);
  auto s = actorps::validate(v);
  BOOST_REQUIRE(!s);
  BOOST_TEST(s.error() == actorps::errc::invalid_config);
  BOOST_TEST(actorps::describe(s.error()).find(text) != std::string::npos, actorps::describe(s.error()));
}

} // namespace

BOOST_AUTO_TEST_SUITE(cluster_options)

BOOST_AUTO_TEST_CASE(endpoints_parse) {
  auto ep = parse_endpoint("10.0.0.7:4251");
  BOOST_REQUIRE(ep);
  BOOST_TEST(ep->host == "10.0.0.7");
  BOOST_TEST(ep->port == 4251);
  BOOST_TEST(ep->str() == "10.0.0.7:4251");
  for (auto bad : {"localhost", ":80", "h:", "h:0", "h:65536", "h:12a", "h:-1"})
    BOOST_TEST(!parse_endpoint(bad), bad);
}

BOOST_AUTO_TEST_CASE(defaults_are_a_local_cluster) {
  auto s = validate(cluster_values{});
  BOOST_REQUIRE(s);
  BOOST_TEST((s->role == node_role::local));
  BOOST_TEST(s->ps.size() == 1u);
  BOOST_TEST(s->workers.size() == 2u);
  BOOST_TEST((s->mode == train_mode::async));
  for (auto m : {train_mode::async, train_mode::sync, train_mode::ssp, train_mode::model_parallel})
    BOOST_TEST((parse_train_mode(to_string(m)) == m));
}

BOOST_AUTO_TEST_CASE(bad_specs_name_their_key) {
  expect([](cluster_values& v) { v.role = "boss"; }, "node.role must be local, chief, ps, worker, chief-worker or scopes");
  expect([](cluster_values& v) { v.role = "worker"; v.index = 2; }, "node.index is 2 but cluster.workers lists 2 workers");
  expect([](cluster_values& v) { v.role = "ps"; v.index = 1; }, "node.index is 1 but cluster.ps lists 1 shards");
  expect([](cluster_values& v) { v.role = "scopes"; v.index = 1; }, "node.index is 1 but cluster.ps lists 1 shards");
  expect([](cluster_values& v) { v.ps = {"127.0.0.1:4250"}; }, "cluster lists 127.0.0.1:4250 twice");
  // (issue 11, item 8: one address written two ways passed the check)
  expect([](cluster_values& v) { v.ps = {"localhost:4250"}; },
         "cluster lists 127.0.0.1:4250 and localhost:4250, the same address twice");
  expect([](cluster_values& v) { v.workers = {"127.0.0.1:99999"}; }, "cluster.workers entry 0 \"127.0.0.1:99999\" is not host:port");
  expect([](cluster_values& v) { v.ps = {}; }, "cluster.ps must list at least one parameter shard");
  expect([](cluster_values& v) { v.mode = "bsp"; }, "train.mode must be async, sync, ssp or model-parallel");
  expect([](cluster_values& v) { v.mode = "model-parallel"; v.slices = 3; },
         "train.slices must be >= 1 and divide the 2 workers (groups of slices), got 3");
  expect([](cluster_values& v) { v.mode = "model-parallel"; v.slices = 0; }, "train.slices must be >= 1");
  expect([](cluster_values& v) { v.replicas_to_aggregate = 3; }, "train.replicas-to-aggregate must be in [0, 2]");
  expect([](cluster_values& v) { v.staleness = -1; }, "train.staleness must be >= 0");
  expect([](cluster_values& v) { v.slow_worker = 2; }, "debug.slow-worker must be -1 or a worker index below 2");
  expect([](cluster_values& v) { v.placement = "random"; }, "cluster.placement must be round-robin or balanced");
  expect([](cluster_values& v) { v.partitioner = "fixed:0"; },
         "cluster.partitioner must be none, fixed:K or max-bytes:B with K, B >= 1, got \"fixed:0\"");
  expect([](cluster_values& v) { v.partitioner = "min-max"; }, "cluster.partitioner must be none, fixed:K or max-bytes:B");
  expect([](cluster_values& v) { v.table_partition = "hash"; }, "cluster.table-partition must be div or mod, got \"hash\"");
  expect([](cluster_values& v) { v.connect_timeout = caf::timespan{0}; }, "cluster.connect-timeout must be positive");
  expect([](cluster_values& v) { v.async_momentum = "double"; }, "train.async-momentum must be compensate or none");
  expect([](cluster_values& v) { v.wire_precision = "fp8"; }, "cluster.wire-precision must be fp32, bf16 or fp16, got \"fp8\"");
  expect([](cluster_values& v) { v.gradient_compression = "top-k"; }, "cluster.gradient-compression must be none or topk");
  expect([](cluster_values& v) { v.value_compression = "all"; }, "cluster.value-compression must be none or topk");
  expect([](cluster_values& v) { v.value_compression = "topk"; v.mode = "sync"; },
         "cluster.value-compression topk needs train.mode async or ssp");
  expect([](cluster_values& v) { v.topk_ratio = 0.0; }, "cluster.topk-ratio must be in (0, 1], got 0");
  expect([](cluster_values& v) { v.replication = "in_graph"; },
         "train.replication must be between-graph or in-graph, got \"in_graph\"");
  expect([](cluster_values& v) { v.replication = "in-graph"; },
         "train.replication in-graph steps are synchronous: it needs train.mode = sync, not async");
  expect([](cluster_values& v) { v.replication = "in-graph"; v.mode = "sync"; v.replicas_to_aggregate = 1; },
         "train.replicas-to-aggregate in-graph replication averages every part of the global batch");
  expect([](cluster_values& v) { v.replication = "in-graph"; v.mode = "sync"; v.wire_precision = "bf16"; },
         "cluster.wire-precision in-graph replication moves fp32 gradients uncompressed");
  expect([](cluster_values& v) { v.topk_ratio = 1.5; }, "cluster.topk-ratio must be in (0, 1], got 1.5");
  expect([](cluster_values& v) { v.momentum_correction = true; },
         "cluster.momentum-correction needs cluster.gradient-compression = topk");
  expect([](cluster_values& v) { v.topk_warmup_steps = 100; },
         "cluster.topk-warmup-steps needs cluster.gradient-compression = topk");
  expect([](cluster_values& v) { v.gradient_compression = "topk"; v.topk_warmup_steps = -1; },
         "cluster.topk-warmup-steps must be >= 0 (0: no warm-up), got -1");
  expect([](cluster_values& v) { v.push_bucket_bytes = -1; },
         "cluster.push-bucket-bytes must be >= 0 (0: one push after backprop), got -1");
  expect([](cluster_values& v) { v.push_early_ms = -0.5; },
         "cluster.push-early-ms must be in [0, 60000] (0: every part as soon as backprop completes it), got -0.5");
  expect([](cluster_values& v) { v.push_early_ms = std::nan(""); },
         "cluster.push-early-ms must be in [0, 60000] (0: every part as soon as backprop completes it), got nan");
  expect([](cluster_values& v) { v.overlap_steps = 2; }, "cluster.overlap-steps must be 0 or 1, got 2");
  for (auto mode : {"sync", "model-parallel"})
    expect([mode](cluster_values& v) { v.overlap_steps = 1; v.mode = mode; },
           "cluster.overlap-steps works with train.mode = async or ssp, between-graph and not elastic only");
  expect([](cluster_values& v) { v.overlap_steps = 1; v.elastic = true; },
         "cluster.overlap-steps works with train.mode = async or ssp, between-graph and not elastic only");
  expect([](cluster_values& v) { v.stream_min_bytes = -1; },
         "cluster.stream-min-bytes must be >= 0 (0: every tensor on the stream), got -1");
  expect([](cluster_values& v) { v.stream_port_offset = 70000; },
         "cluster.stream-port-offset must be in [0, 65535] (0: any free port), got 70000");
  expect([](cluster_values& v) { v.stream_port_offset = 65000; }, "cluster.stream-port-offset puts the stream port of the ps node at ");
}

BOOST_AUTO_TEST_CASE(momentum_correction_moves_the_momentum_to_the_workers) {
  cluster_values v;
  v.gradient_compression = "topk";
  v.momentum_correction = true;
  auto s = validate(v);
  BOOST_REQUIRE(s);
  optimizer_params base;
  base.momentum = 0.9f;
  auto p = shard_optimizer(base, *s);
  BOOST_TEST((p.kind == optimizer_kind::sgd));
  BOOST_TEST(p.learning_rate == base.learning_rate / 2); // 2 async workers: the usual scaling
  BOOST_TEST(applied_momentum(base, *s) == 0.8f, boost::test_tools::tolerance(1e-6f)); // what workers apply
  BOOST_TEST(!check_optimizer(*s, base));
  base.kind = optimizer_kind::adam;
  BOOST_TEST(describe(check_optimizer(*s, base)) == "invalid_config: cluster.momentum-correction needs train.optimizer = momentum, got adam");
}

// Each worker's step computed ahead is one more update in flight: the shards' momentum makes room
// for it as for another worker (a lone worker with 0.95 diverged on the reference MLP without).
BOOST_AUTO_TEST_CASE(overlapped_steps_are_off_unless_asked_for_and_count_as_updates_in_flight) {
  cluster_values v;
  v.workers = {"127.0.0.1:4260"};
  optimizer_params base;
  base.momentum = 0.95f;
  BOOST_TEST(validate(v)->overlap_steps == 0);
  BOOST_TEST(applied_momentum(base, *validate(v)) == 0.95f);
  v.overlap_steps = 1;
  BOOST_TEST(validate(v)->overlap_steps == 1);
  v.mode = "ssp";
  BOOST_TEST(validate(v)->overlap_steps == 1);
  v.mode = "async";
  BOOST_TEST(applied_momentum(base, *validate(v)) == 0.9f, boost::test_tools::tolerance(1e-6f));
  v.workers = {"127.0.0.1:4260", "127.0.0.1:4261"};
  BOOST_TEST(applied_momentum(base, *validate(v)) == 0.8f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(shard_optimizer(base, *validate(v)).learning_rate == base.learning_rate / 2); // (the rate: per worker)
}

BOOST_AUTO_TEST_CASE(the_push_bucket_resolves_to_whole_floats) {
  cluster_values v;
  BOOST_TEST(validate(v)->push_bucket_floats == 65536u); // 256 KiB
  v.push_bucket_bytes = 0;
  BOOST_TEST(validate(v)->push_bucket_floats == 0u);
  v.push_bucket_bytes = 1;
  BOOST_TEST(validate(v)->push_bucket_floats == 1u);
}

BOOST_AUTO_TEST_CASE(the_partitioner_resolves) {
  cluster_values v;
  BOOST_TEST((validate(v)->partition.kind == partitioner::rule::none));
  v.partitioner = "max-bytes:65536";
  auto s = validate(v);
  BOOST_REQUIRE(s);
  BOOST_TEST((s->partition.kind == partitioner::rule::max_bytes));
  BOOST_TEST(s->partition.value == 65536u);
  BOOST_TEST(s->table_partition == "div");
  v.table_partition = "mod";
  BOOST_TEST(validate(v)->table_partition == "mod");
}

BOOST_AUTO_TEST_CASE(wire_settings_resolve) {
  cluster_values v;
  auto s = validate(v);
  BOOST_REQUIRE(s);
  BOOST_TEST(s->wire.exact());
  v.wire_precision = "bf16";
  v.gradient_compression = "topk";
  v.topk_ratio = 0.05;
  s = validate(v);
  BOOST_REQUIRE(s);
  BOOST_TEST((s->wire.precision == wire_precision::bf16));
  BOOST_TEST((s->wire.compression == sparsifier::topk));
  BOOST_TEST(s->wire.topk_ratio == 0.05);
  BOOST_TEST(s->wire.topk_warmup_steps == 0u);
  v.topk_warmup_steps = 600;
  s = validate(v);
  BOOST_REQUIRE(s);
  BOOST_TEST(s->wire.topk_warmup_steps == 600u);
}

BOOST_AUTO_TEST_CASE(model_parallel_groups_are_the_replicas) {
  cluster_values v;
  v.mode = "model-parallel";
  v.slices = 2;
  v.workers = {"127.0.0.1:4260", "127.0.0.1:4261", "127.0.0.1:4262", "127.0.0.1:4263"};
  auto s = validate(v);
  BOOST_REQUIRE(s);
  BOOST_TEST(s->model_parallel());
  BOOST_TEST(s->replicas() == 2u); // 2 groups of 2 slices
  optimizer_params base;
  base.learning_rate = 0.01f;
  base.momentum = 0.95f;
  auto p = shard_optimizer(base, *s);
  BOOST_TEST(p.learning_rate == 0.005f); // divided by the 2 groups, not the 4 workers
  BOOST_TEST(p.momentum == 0.9f, boost::test_tools::tolerance(1e-6f));
  v.mode = "async"; // slices mean nothing outside model-parallel
  BOOST_TEST(validate(v)->replicas() == 4u);
}

BOOST_AUTO_TEST_CASE(elastic_settings_resolve_and_bad_ones_are_named) {
  cluster_values v;
  v.elastic = true;
  v.max_workers = 6;
  v.mode = "sync";
  auto s = validate(v);
  BOOST_REQUIRE(s);
  BOOST_TEST(s->elastic.on);
  BOOST_TEST(s->worker_ids() == 8u);               // 2 configured + up to 6 more
  BOOST_TEST(s->replicas_to_aggregate == 8u);      // all: every live worker
  v.elastic_aggregate = "fixed";
  v.replicas_to_aggregate = 1;
  BOOST_TEST(validate(v)->replicas_to_aggregate == 1u);
  v = cluster_values{};
  v.role = "worker";
  v.index = 7; // not used by a joiner
  v.elastic = true;
  v.join = "10.0.0.5:4250";
  auto joiner = validate(v);
  BOOST_REQUIRE(joiner);
  BOOST_TEST(joiner->elastic.join->str() == "10.0.0.5:4250");
  BOOST_TEST(joiner->chief.str() == "10.0.0.5:4250");
  expect([](cluster_values& v) { v.role = "worker"; v.join = "10.0.0.5:4250"; },
         "node.join needs cluster.elastic: a fixed cluster takes only the workers it lists");
  expect([](cluster_values& v) { v.elastic = true; v.join = "chief"; },
         "node.join \"chief\" is not host:port (the chief's address)");
  expect([](cluster_values& v) { v.elastic = true; v.role = "ps"; v.join = "h:1"; },
         "node.join is for node.role = worker, not ps");
  expect([](cluster_values& v) { v.elastic = true; v.min_workers = 3; },
         "cluster.min-workers must be in [1, 2] (the workers cluster.workers lists start the job), got 3");
  expect([](cluster_values& v) { v.elastic = true; v.max_workers = 1; },
         "cluster.max-workers must be in [2, 4096] (at least the 2 workers cluster.workers lists), got 1");
  expect([](cluster_values& v) { v.elastic = true; v.elastic_aggregate = "some"; },
         "cluster.elastic-aggregate must be all or fixed, got \"some\"");
  expect([](cluster_values& v) { v.elastic = true; v.lease_batches = 0; },
         "cluster.lease-batches must be in [1, 100000], got 0");
  expect([](cluster_values& v) { v.elastic = true; v.mode = "model-parallel"; },
         "cluster.elastic does not work with train.mode = model-parallel: a group cannot go on without a slice");
  expect([](cluster_values& v) { v.elastic = true; v.mode = "sync"; v.replication = "in-graph"; },
         "cluster.elastic works with between-graph replication only (train.replication = in-graph cuts the global "
         "batch among the configured workers)");
}

BOOST_AUTO_TEST_CASE(in_graph_replication_resolves) {
  cluster_values v;
  auto between = validate(v);
  BOOST_REQUIRE(between);
  BOOST_TEST(!between->in_graph());
  v.mode = "sync";
  v.replication = "in-graph";
  auto s = validate(v);
  BOOST_REQUIRE(s);
  BOOST_TEST(s->in_graph());
  BOOST_TEST(std::string{to_string(s->replicate)} == "in-graph");
  BOOST_TEST(s->replicas_to_aggregate == 2u);
}

BOOST_AUTO_TEST_CASE(sync_modes_resolve_replicas) {
  cluster_values v;
  v.mode = "sync";
  auto s = validate(v);
  BOOST_REQUIRE(s);
  BOOST_TEST(s->replicas_to_aggregate == 2u); // 0 means every worker
  BOOST_TEST(s->aggregated());
  optimizer_params base;
  BOOST_TEST(shard_optimizer(base, *s).learning_rate == base.learning_rate); // no async scaling
  v.replicas_to_aggregate = 1;
  BOOST_TEST(validate(v)->replicas_to_aggregate == 1u);
  v.mode = "ssp"; // pushes apply one by one: the async rule holds
  BOOST_TEST(shard_optimizer(base, *validate(v)).learning_rate == base.learning_rate / 2);
}

BOOST_AUTO_TEST_CASE(async_optimizer_scales_lr_and_compensates_momentum) {
  optimizer_params base; // momentum 0.95, lr 0.01
  auto s = *validate(cluster_values{});
  auto p = shard_optimizer(base, s); // 2 workers
  BOOST_TEST(p.learning_rate == 0.005f);
  BOOST_TEST(p.momentum == 0.9f, boost::test_tools::tolerance(1e-6f));
  s.workers.resize(4, s.workers[0]);
  p = shard_optimizer(base, s);
  BOOST_TEST(p.learning_rate == 0.0025f);
  BOOST_TEST(p.momentum == 0.8f, boost::test_tools::tolerance(1e-6f));
  s.workers.resize(30, s.workers[0]);
  BOOST_TEST(shard_optimizer(base, s).momentum == 0.0f);
  s.scale_lr_by_workers = false;
  s.compensate_momentum = false;
  p = shard_optimizer(base, s);
  BOOST_TEST(p.learning_rate == 0.01f);
  BOOST_TEST(p.momentum == 0.95f);
  s.workers.resize(1);
  s.scale_lr_by_workers = true;
  BOOST_TEST(shard_optimizer(base, s).learning_rate == 0.01f); // one worker: nothing to compensate
}

BOOST_AUTO_TEST_SUITE_END()
