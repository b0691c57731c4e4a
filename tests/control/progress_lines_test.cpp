// Tests of control/progress_lines: the chief's progress line every N global steps, with the epoch,
// the rate over the time since the previous line and the mean loss of the examples since then.
#include "control/progress_lines.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;
using namespace std::chrono_literals;

namespace {
const actorps::progress_lines::time_point t0{};
}

BOOST_AUTO_TEST_SUITE(progress_lines)

BOOST_AUTO_TEST_CASE(a_line_every_n_steps_with_the_rate_and_mean_loss_since_the_last) {
  actorps::progress_lines lines{10, 1000};
  lines.start(0, t0);
  BOOST_TEST(!lines.add(5, 250, 250, 500.0, t0 + 1s).has_value());
  auto line = lines.add(10, 500, 250, 250.0, t0 + 2s);
  BOOST_REQUIRE(line.has_value());
  BOOST_TEST(line->text == "step 10 epoch 0.5 | 250 examples/s | loss 1.5");
  BOOST_REQUIRE(line->figures.has_value());
  BOOST_TEST(line->figures->steps_per_sec == 5.0);
  BOOST_TEST(line->figures->loss == 1.5);
  BOOST_TEST(!lines.add(19, 950, 450, 45.0, t0 + 3s).has_value());
  line = lines.add(25, 1250, 300, 30.0, t0 + 4s); // past 20: the next is due at 30
  BOOST_REQUIRE(line.has_value());
  BOOST_TEST(line->figures->examples_per_sec == 375.0);
  BOOST_TEST(!lines.add(29, 1300, 50, 5.0, t0 + 5s).has_value());
  BOOST_TEST(lines.add(30, 1350, 50, 5.0, t0 + 6s).has_value());
}

BOOST_AUTO_TEST_CASE(reports_that_span_no_time_give_no_rate) {
  actorps::progress_lines lines{1, 100};
  lines.start(7, t0); // (a resumed run: the first line is due one step on)
  BOOST_TEST(!lines.add(7, 0, 10, 1.0, t0).has_value());
  auto line = lines.add(8, 10, 10, 1.0, t0);
  BOOST_REQUIRE(line.has_value());
  BOOST_TEST(line->text == "step 8 epoch 0.1 | - examples/s | loss 0.1");
  BOOST_TEST(!line->figures.has_value());
}

BOOST_AUTO_TEST_SUITE_END()
