// Tests of control/traffic_meter: totals and per-step averages of the workers' tensor bytes.
#include "control/traffic_meter.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(traffic_meter)

BOOST_AUTO_TEST_CASE(sums_reports_and_averages_per_worker_step) {
  actorps::traffic_meter meter;
  json_object before;
  meter.describe(before, 0);
  BOOST_TEST(before.str().find("\"sent_bytes_per_step\": 0") != std::string::npos, before.str());
  meter.add(1000, 4000);
  meter.add(500, 2000);
  BOOST_TEST(meter.sent() == 1500u);
  BOOST_TEST(meter.received() == 6000u);
  json_object row;
  meter.describe(row, 3);
  auto text = row.str();
  BOOST_TEST(text.find("\"tensor_bytes_sent\": 1500") != std::string::npos, text);
  BOOST_TEST(text.find("\"tensor_bytes_received\": 6000") != std::string::npos, text);
  BOOST_TEST(text.find("\"sent_bytes_per_step\": 500") != std::string::npos, text);
  BOOST_TEST(text.find("\"received_bytes_per_step\": 2000") != std::string::npos, text);
}

BOOST_AUTO_TEST_SUITE_END()
