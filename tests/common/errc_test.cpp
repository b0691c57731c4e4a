// Tests of common/errc: names and rendering of actorps errors.
#include "common/errc.hpp"

#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <caf/sec.hpp>

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

// An error wrapped in another's context keeps its text without its code twice (the chief's
// start-up failure read "invalid_config: cannot start: invalid_config: ...").
BOOST_AUTO_TEST_CASE(context_of_is_the_text_without_the_code) {
  auto err = caf::make_error(actorps::errc::invalid_config, std::string{"model.init-from x: no such file"});
  BOOST_TEST(context_of(err) == "model.init-from x: no such file");
  BOOST_TEST(context_of(caf::make_error(caf::sec::request_timeout)) == caf::to_string(caf::make_error(caf::sec::request_timeout)));
}

BOOST_AUTO_TEST_CASE(every_code_has_a_name) {
  for (int code = 0; code <= static_cast<int>(actorps::errc::internal_error); ++code)
    BOOST_TEST(std::string{to_string(static_cast<actorps::errc>(code))} != "unknown");
  BOOST_TEST(render_errc(static_cast<uint8_t>(actorps::errc::invalid_config), "key x")
             == "invalid_config: key x");
}

BOOST_AUTO_TEST_SUITE_END()
