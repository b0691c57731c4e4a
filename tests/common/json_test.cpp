// Tests of common/json: quoting, numbers, nulls.
#include "common/json.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(json)

BOOST_AUTO_TEST_CASE(object_in_insertion_order) {
  json_object o;
  o.add("mode", "single").add("steps", int64_t{12}).add("acc", 0.875).add("ok", true);
  BOOST_TEST(o.str() == R"({"mode": "single", "steps": 12, "acc": 0.875, "ok": true})");
}

BOOST_AUTO_TEST_CASE(non_finite_and_missing_become_null) {
  json_object o;
  o.add("a", std::numeric_limits<double>::quiet_NaN()).add("b", std::optional<double>{});
  BOOST_TEST(o.str() == R"({"a": null, "b": null})");
}

BOOST_AUTO_TEST_CASE(strings_are_escaped) {
  BOOST_TEST(json_quote("a\"b\\c\nd\x01") == R"("a\"b\\c\nd\u0001")");
}

BOOST_AUTO_TEST_SUITE_END()
