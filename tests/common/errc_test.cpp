// Tests of common/errc: names and rendering of actorps errors.
#include "common/errc.hpp"

#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(errc)

BOOST_AUTO_TEST_CASE(describe_names_code_and_context) {
  auto err = caf::make_error(actorps::errc::corrupt_data, std::string{"a.idx: truncated"});
  BOOST_TEST(describe(err) == "corrupt_data: a.idx: truncated");
  BOOST_TEST(err == actorps::errc::corrupt_data);
}

BOOST_AUTO_TEST_CASE(describe_without_context_and_none) {
  BOOST_TEST(describe(caf::make_error(actorps::errc::device_unavailable)) == "device_unavailable");
  BOOST_TEST(describe(caf::error{}) == "no error");
}

BOOST_AUTO_TEST_CASE(every_code_has_a_name) {
  for (int code = 0; code <= static_cast<int>(actorps::errc::terminated); ++code)
    BOOST_TEST(std::string{to_string(static_cast<actorps::errc>(code))} != "unknown");
  BOOST_TEST(render_errc(static_cast<uint8_t>(actorps::errc::invalid_config), "key x")
             == "invalid_config: key x");
}

BOOST_AUTO_TEST_SUITE_END()
