// Tests of observe/metric_registry: gauges, counters, labels and the text exposition format.
#include "observe/metric_registry.hpp"

#include "observe/metric_catalog.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(metric_registry)

BOOST_AUTO_TEST_CASE(gauges_and_counters_render_with_the_nodes_labels) {
  actorps::metric_registry r{{{"run", "r\"1"}, {"role", "worker"}, {"index", "2"}}};
  r.set("actorps_global_step", 120);
  r.add("actorps_pushes_total", 2);
  r.add("actorps_pushes_total", 3);
  r.add("actorps_straggler_steps_total", 4, {"worker", "1"});
  BOOST_TEST(r.value("actorps_pushes_total") == 5.0);
  BOOST_TEST(r.value("actorps_straggler_steps_total", {"worker", "1"}) == 4.0);
  BOOST_TEST(r.value("absent") == 0.0);
  auto text = r.exposition();
  BOOST_TEST(text.find("# TYPE actorps_global_step gauge\n"
                       "actorps_global_step{index=\"2\",role=\"worker\",run=\"r\\\"1\"} 120\n") != std::string::npos, text);
  BOOST_TEST(text.find("# TYPE actorps_pushes_total counter\n") != std::string::npos, text);
  BOOST_TEST(text.find("actorps_straggler_steps_total{index=\"2\",role=\"worker\",run=\"r\\\"1\",worker=\"1\"} 4\n")
               != std::string::npos, text);
}

BOOST_AUTO_TEST_CASE(several_registries_share_one_type_line_per_name) {
  actorps::metric_registry chief{{{"role", "chief"}}}, worker{{{"role", "worker"}}};
  chief.set("actorps_global_step", 10);
  worker.set("actorps_global_step", 9);
  worker.add("actorps_worker_steps_total", 9);
  auto text = actorps::metric_registry::exposition_of({&chief, &worker});
  BOOST_TEST(text == "# HELP actorps_global_step " + metric_help("actorps_global_step") + "\n"
                     "# TYPE actorps_global_step gauge\n"
                     "actorps_global_step{role=\"chief\"} 10\n"
                     "actorps_global_step{role=\"worker\"} 9\n"
                     "# HELP actorps_worker_steps_total Steps this worker computed and pushed.\n"
                     "# TYPE actorps_worker_steps_total counter\n"
                     "actorps_worker_steps_total{role=\"worker\"} 9\n", text);
}

// Prometheus' conventions (promtool check metrics): base units, "_per_second" for rates, a HELP
// line for every name; the tags a labelled metric carries are not repeated per worker.
BOOST_AUTO_TEST_CASE(tags_become_metric_names_in_base_units) {
  auto name = [](const std::string& tag) { return prometheus_scalar(tag) ? prometheus_scalar(tag)->name : "none"; };
  BOOST_TEST(name("validation/accuracy") == "actorps_validation_accuracy");
  BOOST_TEST(name("global_step/sec") == "actorps_global_step_per_second");
  BOOST_TEST(name("examples/sec") == "actorps_examples_per_second");
  BOOST_TEST(name("shard/bytes_in_per_sec") == "actorps_shard_bytes_in_per_second");
  BOOST_TEST(name("step/push_ms") == "actorps_step_push_seconds");
  BOOST_TEST(prometheus_scalar("step/push_ms")->scale == 0.001);
  BOOST_TEST(name("step/push-rate") == "actorps_step_push_rate");
  BOOST_TEST(name("stragglers/worker_3") == "none");
  BOOST_TEST(name("stalls") == "none");
  for (auto tag : {"validation/loss", "validation/accuracy", "test/loss", "test/accuracy", "train/loss", "loss",
                   "examples/sec", "global_step/sec", "learning_rate", "stale_dropped", "tensor_bytes/sent_per_step",
                   "tensor_bytes/received_per_step", "input/wait_ms", "step/input_wait_ms", "step/compute_ms",
                   "step/push_ms", "step/wait_for_pull_ms", "shard/updates_per_sec", "shard/bytes_in_per_sec",
                   "shard/bytes_out_per_sec"}) // docs/config.md's tags: each has its own HELP text
    BOOST_TEST(metric_help(name(tag)) != metric_help("actorps_no_such_tag"), tag);
}

BOOST_AUTO_TEST_CASE(every_name_has_a_help_line_before_its_type) {
  actorps::metric_registry r{{{"role", "ps"}}};
  r.add("actorps_shard_updates_total", 3);
  r.set("actorps_some_new_tag", 1);
  BOOST_TEST(r.exposition() == "# HELP actorps_shard_updates_total Updates this parameter shard applied.\n"
                               "# TYPE actorps_shard_updates_total counter\n"
                               "actorps_shard_updates_total{role=\"ps\"} 3\n"
                               "# HELP actorps_some_new_tag The TensorBoard scalar of the same name.\n"
                               "# TYPE actorps_some_new_tag gauge\n"
                               "actorps_some_new_tag{role=\"ps\"} 1\n");
}

BOOST_AUTO_TEST_SUITE_END()
