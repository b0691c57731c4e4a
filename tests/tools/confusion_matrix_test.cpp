// Tests of tools/confusion_matrix: counts, accuracy, per-class accuracy, the loss, and the JSON.
#include "tools/confusion_matrix.hpp"

#include "common/json_reader.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(confusion_matrix)

BOOST_AUTO_TEST_CASE(counts_a_known_set) {
  // 3 classes; class 2 never occurs. Predictions: 0, 1, 1, 0 (a tie between 0 and 1 picks 0).
  const float logits[] = {2, 0, 0, /**/ 0, 2, 0, /**/ 0, 2, 0, /**/ 1, 1, 0};
  const float labels[] = {0, 1, 0, 1};
  actorps::confusion_matrix cm{3};
  cm.add(logits, labels, 2);
  cm.add(logits + 6, labels + 2, 2);
  BOOST_TEST(cm.examples() == 4);
  BOOST_TEST(cm.count(0, 0) == 1);
  BOOST_TEST(cm.count(0, 1) == 1);
  BOOST_TEST(cm.count(1, 1) == 1);
  BOOST_TEST(cm.count(1, 0) == 1);
  BOOST_TEST(cm.accuracy() == 0.5);
  auto per_class = cm.class_accuracy();
  BOOST_TEST(per_class[0] == 0.5);
  BOOST_TEST(per_class[1] == 0.5);
  BOOST_TEST(per_class[2] < 0.0); // no examples
  double a = std::log(std::exp(2.0) + 2.0); // -log softmax of the big logit
  double want = (a - 2 + a - 2 + a - 0 + std::log(2 * std::exp(1.0) + 1.0) - 1) / 4;
  BOOST_TEST(cm.loss() == want, boost::test_tools::tolerance(1e-12));
  auto json = parse_json(cm.json(), "t");
  BOOST_REQUIRE(json);
  BOOST_TEST(json->find("examples")->number == 4.0);
  BOOST_TEST(json->find("accuracy")->number == 0.5);
  BOOST_TEST(json->find("class_accuracy")->items[2].is(json_value::kind::null));
  BOOST_TEST(json->find("confusion")->items[0].items[1].number == 1.0);
  BOOST_TEST(cm.table().find("    2         -  |") != std::string::npos, cm.table());
}

BOOST_AUTO_TEST_SUITE_END()
