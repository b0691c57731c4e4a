// Tests of config/table_rules: an embedding model trains between-graph in async, sync and ssp,
// and with overlapped steps in async where the pushes ask the rows back; the options that move
// whole variables, and overlap where a step's rows are pulled before it, are refused naming their key.
#include "config/table_rules.hpp"

#include "common/errc.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;

namespace {

train_settings text_model() {
  train_settings t;
  t.model.layers = *parse_layers({"embedding 18 32 mean", "dense 64 relu", "dense 2"});
  return t;
}

std::string refusal(const worker_settings& cluster, const train_settings& train = text_model()) {
  auto err = check_table_cluster(cluster, train);
  return err ? describe(err) : std::string{};
}

} // namespace

BOOST_AUTO_TEST_SUITE(table_rules)

BOOST_AUTO_TEST_CASE(async_sync_and_ssp_train_a_table) {
  for (auto mode : {train_mode::async, train_mode::sync, train_mode::ssp}) {
    worker_settings c;
    c.mode = mode;
    BOOST_TEST(refusal(c).empty());
  }
}

BOOST_AUTO_TEST_CASE(async_steps_overlap_with_the_rows_asked_back) {
  worker_settings c; // (async, cluster.rows-with-push: each push asks back the rows of the batch two steps on)
  c.overlap_steps = 1;
  BOOST_TEST(refusal(c).empty());
}

BOOST_AUTO_TEST_CASE(options_that_move_whole_variables_are_refused_by_key) {
  auto refused = [](worker_settings c, const std::string& key) {
    auto why = refusal(c);
    BOOST_TEST(why.find(key) != std::string::npos, why);
    BOOST_TEST(why.find("invalid_config") == 0u, why);
    BOOST_TEST(why.find("\"embedding 18 32 mean\" is an embedding table") != std::string::npos, why);
  };
  worker_settings c;
  c.replicate = replication::in_graph;
  refused(c, "cluster.replication = in-graph");
  c = {};
  c.mode = train_mode::model_parallel;
  refused(c, "train.mode = model-parallel");
  c = {};
  c.overlap_steps = 1;
  c.mode = train_mode::ssp;
  refused(c, "cluster.overlap-steps");
  c = {};
  c.overlap_steps = 1;
  c.rows_with_push = false;
  refused(c, "cluster.overlap-steps");
  c = {};
  c.wire.compression = sparsifier::topk;
  refused(c, "cluster.gradient-compression");
  c = {};
  c.wire.value_compression = sparsifier::topk;
  refused(c, "cluster.value-compression");
  c = {};
  c.elastic.on = true;
  refused(c, "cluster.elastic");
  auto towers = text_model();
  towers.device.devices = {{device_mode::cpu, 0}, {device_mode::cpu, 1}};
  BOOST_TEST(refusal({}, towers).find("compute.devices") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_dense_model_has_nothing_to_refuse) {
  worker_settings c;
  c.replicate = replication::in_graph;
  train_settings dense;
  dense.model.layers = *parse_layers({"dense 10"});
  BOOST_TEST(refusal(c, dense).empty());
}

BOOST_AUTO_TEST_SUITE_END()
