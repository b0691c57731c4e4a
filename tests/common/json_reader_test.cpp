// Tests of common/json_reader: every value kind, escapes, what json_object writes, and named
// errors for broken text.
#include "common/json_reader.hpp"

#include "common/errc.hpp"
#include "common/json.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(json_reader)

BOOST_AUTO_TEST_CASE(reads_every_kind) {
  auto v = parse_json(R"( {"a": [1, -2.5e3, true, false, null], "b": {"c": "x"}, "d": ""} )", "t");
  BOOST_TEST_REQUIRE(static_cast<bool>(v));
  BOOST_TEST(v->is(json_value::kind::object));
  auto a = v->find("a");
  BOOST_TEST_REQUIRE(a != nullptr);
  BOOST_TEST_REQUIRE(a->items.size() == 5u);
  BOOST_TEST(a->items[0].number == 1.0);
  BOOST_TEST(a->items[1].number == -2500.0);
  BOOST_TEST((a->items[2].is(json_value::kind::boolean) && a->items[2].flag));
  BOOST_TEST((a->items[3].is(json_value::kind::boolean) && !a->items[3].flag));
  BOOST_TEST(a->items[4].is(json_value::kind::null));
  BOOST_TEST(v->find("b")->find("c")->text == "x");
  BOOST_TEST(v->find("d")->text == "");
  BOOST_TEST(v->find("missing") == nullptr);
  BOOST_TEST(a->find("a") == nullptr); // not an object
}

BOOST_AUTO_TEST_CASE(escapes_and_unicode) {
  auto v = parse_json(R"("q\"b\\s\/n\nt\tu\u00e9\ud83d\ude00")", "t");
  BOOST_TEST_REQUIRE(static_cast<bool>(v));
  BOOST_TEST(v->text == "q\"b\\s/n\nt\tu\xc3\xa9\xf0\x9f\x98\x80");
}

BOOST_AUTO_TEST_CASE(reads_what_json_object_writes) {
  json_object o;
  o.add("name", "a \"quoted\"\nline").add("n", int64_t{-7}).add("x", 0.25).add("ok", true);
  o.add_raw("list", json_array({1, 2, 3}));
  auto v = parse_json(o.str(), "t");
  BOOST_TEST_REQUIRE(static_cast<bool>(v));
  BOOST_TEST(v->find("name")->text == "a \"quoted\"\nline");
  BOOST_TEST(v->find("n")->number == -7.0);
  BOOST_TEST(v->find("x")->number == 0.25);
  BOOST_TEST(v->find("ok")->flag);
  BOOST_TEST(v->find("list")->items.size() == 3u);
}

BOOST_AUTO_TEST_CASE(broken_text_is_a_named_error) {
  for (const char* text : {"", "{", "{\"a\" 1}", "[1,]", "[1 2]", "\"open", "tru", "{\"a\": 1} x", "01x",
                           "\"\\q\"", "{1: 2}", "\"\\u12\""}) {
    auto v = parse_json(text, "model.json");
    BOOST_TEST_INFO("text: " << text);
    BOOST_TEST_REQUIRE(!v);
    BOOST_TEST((v.error() == errc::corrupt_data));
    BOOST_TEST(describe(v.error()).find("model.json: byte ") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(deep_nesting_is_refused_not_a_crash) {
  std::string deep(10000, '[');
  auto v = parse_json(deep, "t");
  BOOST_TEST_REQUIRE(!v);
  BOOST_TEST(describe(v.error()).find("nested too deeply") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
