// Tests of train/stop_rule: limits, target accuracy with its time, and patience.
#include "train/stop_rule.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(stop_rule)

BOOST_AUTO_TEST_CASE(step_and_epoch_limits) {
  actorps::stop_rule r{{100, 3, 0.0, 0}};
  BOOST_TEST(!r.should_stop(99, 2.5));
  BOOST_TEST(*r.should_stop(100, 0.5) == "max steps 100 reached");
  BOOST_TEST(*r.should_stop(10, 3.0) == "max epochs 3 reached");
  actorps::stop_rule timed{{0, 0, 0.0, 0, 30.0}};
  BOOST_TEST(!timed.should_stop(10, 1.0, 29.9));
  BOOST_TEST(*timed.should_stop(10, 1.0, 30.0) == "max seconds 30 reached");
  actorps::stop_rule unlimited{{0, 0, 0.0, 0}};
  BOOST_TEST(!unlimited.should_stop(1000000, 1000.0));
}

BOOST_AUTO_TEST_CASE(target_accuracy_records_the_first_time) {
  actorps::stop_rule r{{0, 10, 0.88, 0}};
  r.observe_evaluation(0.5, 0.85, 3.0);
  BOOST_TEST(!r.seconds_to_target());
  BOOST_TEST(!r.should_stop(10, 1.0));
  r.observe_evaluation(0.4, 0.881, 7.5);
  r.observe_evaluation(0.4, 0.90, 9.0);
  BOOST_TEST(*r.seconds_to_target() == 7.5);
  BOOST_TEST(r.should_stop(10, 1.0)->find("target validation accuracy") == 0);
  BOOST_TEST(r.best_validation_accuracy() == 0.90);
}

BOOST_AUTO_TEST_CASE(patience_counts_evaluations_without_a_lower_loss) {
  actorps::stop_rule r{{0, 0, 0.0, 2}};
  BOOST_TEST(r.observe_evaluation(1.0, 0.5, 1));
  BOOST_TEST(r.observe_evaluation(0.8, 0.6, 2));
  BOOST_TEST(!r.observe_evaluation(0.9, 0.7, 3));
  BOOST_TEST(!r.should_stop(0, 0));
  BOOST_TEST(r.observe_evaluation(0.7, 0.7, 4)); // a new best resets the count
  BOOST_TEST(!r.observe_evaluation(0.75, 0.7, 5));
  BOOST_TEST(!r.observe_evaluation(0.71, 0.7, 6));
  BOOST_TEST(r.should_stop(0, 0)->find("early stopping") == 0);
  BOOST_TEST(r.best_validation_loss() == 0.7);
}

BOOST_AUTO_TEST_CASE(patience_can_watch_the_training_loss_and_the_best_model_stays_the_validation_best) {
  actorps::stop_limits limits{0, 0, 0.0, 2};
  limits.metric = actorps::stop_metric::train_loss;
  actorps::stop_rule r{limits};
  BOOST_TEST(r.observe_evaluation(1.0, 0.5, 1, 0.9));
  BOOST_TEST(!r.observe_evaluation(1.1, 0.5, 2, 0.8)); // training loss improves: no count
  BOOST_TEST(!r.observe_evaluation(1.2, 0.5, 3, 0.85));
  BOOST_TEST(!r.should_stop(0, 0));
  BOOST_TEST(r.observe_evaluation(0.9, 0.6, 4)); // no training loss measured: counts
  auto why = r.should_stop(0, 0);
  BOOST_REQUIRE(why);
  BOOST_TEST(*why == "early stopping: no lower training loss in 2 evaluations");
  BOOST_TEST(r.best_validation_loss() == 0.9);
}

BOOST_AUTO_TEST_CASE(loss_mean_averages_what_came_since_it_was_last_taken) {
  actorps::loss_mean m;
  BOOST_TEST(!m.take());
  m.add(3.0, 10);
  m.add(1.0, 10);
  BOOST_TEST(*m.take() == 0.2);
  BOOST_TEST(!m.take());
}

BOOST_AUTO_TEST_SUITE_END()
