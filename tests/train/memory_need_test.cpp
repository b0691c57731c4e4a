// Tests of train/memory_need: the estimate's parts for a known model, and the refusal that names
// them (issue 50, item 19: --node.check-only took a batch of 10^9 and 10^6 hidden units).
#include "train/memory_need.hpp"

#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <string>

using namespace actorps;

namespace {

train_settings settings(std::vector<int> hidden, int batch) {
  option_values v;
  v.hidden = std::move(hidden);
  v.batch_size = batch;
  auto s = validate(v);
  BOOST_REQUIRE(s);
  return *s;
}

} // namespace

BOOST_AUTO_TEST_SUITE(memory_need)

BOOST_AUTO_TEST_CASE(the_parts_of_a_known_model) {
  auto need = estimate_memory(settings({160}, 50)); // 784 -> 160 -> 10 on 28x28x1
  BOOST_TEST(need.parameters == 784u * 160 + 160 + 160 * 10 + 10);
  BOOST_TEST(need.activation_floats == 784u + 160 + 10);
  BOOST_TEST(need.rows == 1000u); // (the evaluation batch is the larger)
  BOOST_TEST(need.bytes() == 4 * (4 * need.parameters + 3 * 1000 * need.activation_floats));
  BOOST_TEST(!check_memory(need, uint64_t{1} << 30));
  BOOST_TEST(!check_memory(need, std::nullopt)); // (unknown: nothing refused)
}

BOOST_AUTO_TEST_CASE(what_cannot_fit_is_refused_naming_the_figures) {
  auto batch = estimate_memory(settings({160}, 1000000000));
  BOOST_TEST(batch.rows == 1000000000u);
  auto err = check_memory(batch, uint64_t{16} << 30);
  BOOST_REQUIRE(err);
  BOOST_TEST(err == errc::invalid_config);
  const std::string text = describe(err);
  BOOST_TEST(text.find("this configuration needs at least ") != std::string::npos, text);
  BOOST_TEST(text.find("batch 1000000000 x 954 activations") != std::string::npos, text);
  BOOST_TEST(text.find("more than the 16384 MiB this machine has available") != std::string::npos, text);
  auto wide = estimate_memory(settings({1000000}, 50)); // 10^6 hidden units: 795 M parameters
  auto wide_err = check_memory(wide, uint64_t{8} << 30);
  BOOST_REQUIRE(wide_err);
  BOOST_TEST(describe(wide_err).find("795000010 parameters") != std::string::npos, describe(wide_err));
}

BOOST_AUTO_TEST_SUITE_END()
