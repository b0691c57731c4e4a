// Tests of common/checkpoint_choice: a restart restores the newest checkpoint that verifies and
// names those it passed over; none saved is no error; none verifying is one that names them all.
#include "common/checkpoint_choice.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;

namespace {

// Saved checkpoints by step, oldest first; a fault text for one that does not verify.
struct saved {
  int step;
  std::string fault;
};

caf::expected<std::optional<chosen_checkpoint<int>>> choose(const std::vector<saved>& all) {
  return newest_readable<int>(all.size(), [&](size_t i) -> caf::expected<int> {
    if (!all[i].fault.empty())
      return caf::make_error(errc::corrupt_data, all[i].fault);
    return all[i].step;
  });
}

} // namespace

BOOST_AUTO_TEST_SUITE(checkpoint_choice)

BOOST_AUTO_TEST_CASE(the_newest_that_verifies_and_the_newer_ones_named) {
  auto got = choose({{100, ""}, {200, ""}, {300, "ckpt-300: truncated"}, {400, "ckpt-400: checksum mismatch"}});
  BOOST_REQUIRE(got);
  BOOST_REQUIRE(got->has_value());
  BOOST_TEST((*got)->value == 200);
  BOOST_TEST((*got)->index == 1u);
  BOOST_REQUIRE_EQUAL((*got)->skipped.size(), 2u);
  BOOST_TEST((*got)->skipped[0].find("ckpt-400: checksum mismatch") != std::string::npos);
  BOOST_TEST((*got)->skipped[1].find("ckpt-300: truncated") != std::string::npos);
  auto newest = choose({{100, ""}, {200, ""}});
  BOOST_TEST((*newest)->value == 200);
  BOOST_TEST((*newest)->skipped.empty());
}

BOOST_AUTO_TEST_CASE(none_saved_is_no_error_none_verifying_names_each) {
  auto none = choose({});
  BOOST_REQUIRE(none);
  BOOST_TEST(!none->has_value());
  auto bad = choose({{100, "ckpt-100: missing"}, {200, "ckpt-200: truncated"}});
  BOOST_REQUIRE(!bad);
  BOOST_TEST((bad.error() == errc::corrupt_data));
  const auto text = describe(bad.error());
  BOOST_TEST(text.find("ckpt-200: truncated") < text.find("ckpt-100: missing"));
}

BOOST_AUTO_TEST_SUITE_END()
