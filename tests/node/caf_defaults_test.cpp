// The CAF defaults of every node: set before the config is read, so the command line (and a
// config file, parsed the same way) overrides each of them.
#include "node/caf_defaults.hpp"

#include "config/strict_config.hpp"
#include "tests/support/command_line.hpp"

#include <caf/io/middleman.hpp>
#include <caf/settings.hpp>

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

using namespace actorps;

namespace {

struct node_like_config : strict_config {
  node_like_config() {
    load<caf::io::middleman>();
    set_node_caf_defaults(*this);
  }
  outcome run(std::vector<std::string> args) { return test::parse_args(*this, std::move(args)); }
};

size_t count_option(const caf::actor_system_config& cfg, caf::string_view key) {
  return caf::get_or(cfg, key, size_t{99});
}

} // namespace

BOOST_AUTO_TEST_SUITE(caf_defaults)

BOOST_AUTO_TEST_CASE(a_node_deserializes_on_the_multiplexer_and_polls_rarely) {
  node_like_config cfg;
  BOOST_REQUIRE((cfg.run({}) == strict_config::outcome::run));
  BOOST_TEST(count_option(cfg, "middleman.workers") == 0u);
  BOOST_TEST(count_option(cfg, "scheduler.max-threads") == 1u);
  auto sleep = caf::get_or(cfg, "work-stealing.relaxed-sleep-duration", caf::timespan{0});
  BOOST_TEST(sleep.count() == caf::timespan{std::chrono::milliseconds(50)}.count());
}

BOOST_AUTO_TEST_CASE(the_command_line_overrides_them) {
  node_like_config cfg;
  BOOST_REQUIRE((cfg.run({"--middleman.workers=2", "--scheduler.max-threads=3"}) == strict_config::outcome::run));
  BOOST_TEST(count_option(cfg, "middleman.workers") == 2u);
  BOOST_TEST(count_option(cfg, "scheduler.max-threads") == 3u);
}

BOOST_AUTO_TEST_SUITE_END()
