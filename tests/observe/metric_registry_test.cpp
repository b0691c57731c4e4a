// Tests of observe/metric_registry: gauges, counters, labels and the text exposition format.
#include "observe/metric_registry.hpp"

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
  BOOST_TEST(text == "# TYPE actorps_global_step gauge\n"
                     "actorps_global_step{role=\"chief\"} 10\n"
                     "actorps_global_step{role=\"worker\"} 9\n"
                     "# TYPE actorps_worker_steps_total counter\n"
                     "actorps_worker_steps_total{role=\"worker\"} 9\n", text);
}

BOOST_AUTO_TEST_CASE(tags_become_metric_names) {
  BOOST_TEST(actorps::metric_registry::name_of_tag("validation/accuracy") == "actorps_validation_accuracy");
  BOOST_TEST(actorps::metric_registry::name_of_tag("global_step/sec") == "actorps_global_step_sec");
  BOOST_TEST(actorps::metric_registry::name_of_tag("step/push-ms") == "actorps_step_push_ms");
}

BOOST_AUTO_TEST_SUITE_END()
