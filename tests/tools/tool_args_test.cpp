// Tests of tools/tool_args: positional arguments, both option spellings, flags, and named errors.
#include "tools/tool_args.hpp"

#include "common/errc.hpp"
#include "tests/support/command_line.hpp"

#include <boost/test/unit_test.hpp>

#include <utility>

using namespace actorps;

namespace {

caf::expected<tool_args> parse(std::vector<std::string> words) {
  test::command_line cl{std::move(words)};
  static const std::vector<tool_option> options = {{"top", "k", "1"}, {"plot", "png", "", true, "auto.png"}};
  return parse_tool_args(cl.argc(), cl.argv(), options);
}

} // namespace

BOOST_AUTO_TEST_SUITE(tool_args)

BOOST_AUTO_TEST_CASE(options_flags_and_positionals) {
  auto a = parse({"model", "--top", "3", "x.png", "--plot", "--", "--odd-name.png"});
  BOOST_REQUIRE(a);
  BOOST_TEST((a->positional == std::vector<std::string>{"model", "x.png", "--odd-name.png"}));
  BOOST_TEST(a->get("top") == "3");
  BOOST_TEST(a->get("plot") == "auto.png");
  auto b = parse({"--top=5", "--plot=m.png", "m"});
  BOOST_REQUIRE(b);
  BOOST_TEST(b->get("top") == "5");
  BOOST_TEST(b->get("plot") == "m.png");
  auto defaults = parse({"m"});
  BOOST_TEST(defaults->get("top") == "1");
  BOOST_TEST(defaults->get("plot") == "");
  BOOST_TEST(parse({"--help"})->help);
  BOOST_TEST(int_option(*b, "top", 1, 10).value() == 5);
}

BOOST_AUTO_TEST_CASE(bad_command_lines_are_named) {
  auto unknown = parse({"m", "--tpo=3"});
  BOOST_REQUIRE(!unknown);
  BOOST_TEST(describe(unknown.error()) == "invalid_config: unknown option --tpo (see --help)");
  auto missing = parse({"m", "--top"});
  BOOST_REQUIRE(!missing);
  BOOST_TEST(describe(missing.error()) == "invalid_config: option --top needs a value");
  auto a = parse({"--top=x3"});
  auto bad = int_option(*a, "top", 1, 10);
  BOOST_REQUIRE(!bad);
  BOOST_TEST(describe(bad.error()) == "invalid_config: --top must be a whole number in [1, 10], got \"x3\"");
  BOOST_TEST(!int_option(*parse({"--top=0"}), "top", 1, 10));
}

BOOST_AUTO_TEST_CASE(begin_tool_answers_help_and_counts) {
  static const std::vector<tool_option> options = {{"top", "k", "1"}};
  auto run = [](std::vector<std::string> words, actorps::tool_args& args) {
    test::command_line cl{std::move(words)};
    return begin_tool(cl.argc(), cl.argv(), options, "tool MODEL", 1, 1, args);
  };
  actorps::tool_args args;
  BOOST_TEST((run({"--help"}, args) == std::optional<int>{0}));
  BOOST_TEST((run({}, args) == std::optional<int>{2})); // too few
  BOOST_TEST((run({"a", "b"}, args) == std::optional<int>{2})); // too many
  BOOST_TEST((run({"a", "--bad=1"}, args) == std::optional<int>{2}));
  BOOST_TEST(!run({"a", "--top=4"}, args).has_value());
  BOOST_TEST(args.get("top") == "4");
  BOOST_TEST(args.positional.front() == "a");
}

BOOST_AUTO_TEST_SUITE_END()
