// Tests of model/loss_meter: the divergence rule that the trainer and every worker share.
#include "model/loss_meter.hpp"

#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <string>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(loss_meter)

BOOST_AUTO_TEST_CASE(a_loss_a_model_can_have_is_not_divergence) {
  for (double loss : {0.0, 0.3, 2.3026, 40.0, max_sane_loss})
    BOOST_TEST(!check_divergence(batch_metrics{loss, 0.5, 50}, "step 7"), loss);
  // (no row trained: nothing to judge)
  BOOST_TEST(!check_divergence(batch_metrics{std::nan(""), 0.0, 0}, "step 7"));
}

BOOST_AUTO_TEST_CASE(an_exploded_or_non_finite_loss_is_named) {
  // train.learning-rate = 1 on the reference MLP: a finite 2.4e21 at 10% accuracy
  for (double loss : {2.4e21, 1.0e7, std::numeric_limits<double>::infinity(), std::nan("")}) {
    auto err = check_divergence(batch_metrics{loss, 0.1, 50}, "step 200");
    BOOST_REQUIRE(err);
    BOOST_TEST(err == errc::non_finite);
    const std::string text = describe(err);
    BOOST_TEST(text.find("training diverged at step 200 (loss ") != std::string::npos, text);
    BOOST_TEST(text.find("); lower train.learning-rate") != std::string::npos, text);
  }
}

BOOST_AUTO_TEST_SUITE_END()
