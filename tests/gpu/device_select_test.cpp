// Tests of gpu/device_select: explicit CPU, automatic fallback, demanded GPU, memory cap.
#include "gpu/device_select.hpp"

#include "common/errc.hpp"

#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;
namespace utf = boost::unit_test;

namespace {

boost::test_tools::assertion_result cuda_available(utf::test_unit_id) {
  auto count = cuda_device_count();
  boost::test_tools::assertion_result res{static_cast<bool>(count)};
  if (!count)
    res.message() << "no CUDA device: " << describe(count.error());
  return res;
}

} // namespace

BOOST_AUTO_TEST_SUITE(device_select)

BOOST_AUTO_TEST_CASE(cpu_mode_gives_the_cpu_backend) {
  device_options opts;
  opts.mode = device_mode::cpu;
  opts.cpu_threads = 1;
  auto be = select_backend(opts, "test");
  BOOST_REQUIRE(be);
  BOOST_TEST(!(*be)->is_gpu());
  BOOST_TEST((*be)->name() == "cpu (OpenBLAS, 1 thread)");
}

BOOST_AUTO_TEST_CASE(auto_mode_uses_a_gpu_exactly_when_one_is_usable) {
  bool have_gpu = static_cast<bool>(cuda_device_count());
  BOOST_TEST_MESSAGE("CUDA device usable here: " << (have_gpu ? "yes" : "no"));
  auto be = select_backend(device_options{}, "test");
  BOOST_REQUIRE(be);
  BOOST_TEST((*be)->is_gpu() == have_gpu);
}

BOOST_AUTO_TEST_CASE(gpu_mode_without_device_is_a_clear_error) {
  auto count = cuda_device_count();
  device_options opts;
  opts.mode = device_mode::gpu;
  if (count)
    opts.gpu_index = *count; // one past the last device: unusable on any machine
  auto be = select_backend(opts, "test");
  BOOST_REQUIRE(!be);
  BOOST_TEST(be.error() == actorps::errc::device_unavailable);
  BOOST_TEST(describe(be.error()).find("compute.device = gpu but") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(bad_thread_count_is_rejected) {
  device_options opts;
  opts.cpu_threads = 0;
  auto be = select_backend(opts, "test");
  BOOST_REQUIRE(!be);
  BOOST_TEST(be.error() == actorps::errc::invalid_config);
}

BOOST_AUTO_TEST_CASE(mode_names_round_trip) {
  for (auto m : {device_mode::auto_select, device_mode::cpu, device_mode::gpu})
    BOOST_TEST((parse_device_mode(to_string(m)) == m));
  BOOST_TEST(!parse_device_mode("tpu"));
}

BOOST_AUTO_TEST_CASE(memory_fraction_caps_allocations, *utf::precondition(cuda_available)) {
  device_options opts;
  opts.mode = device_mode::gpu;
  opts.gpu_memory_fraction = 0.001; // about 80 MiB of an 80 GiB device
  auto be = select_backend(opts, "test");
  BOOST_REQUIRE(be);
  auto small = (*be)->allocate(1 << 20); // 4 MiB
  BOOST_TEST(static_cast<bool>(small));
  auto big = (*be)->allocate(size_t{1} << 30); // 4 GiB
  BOOST_REQUIRE(!big);
  BOOST_TEST(big.error() == actorps::errc::out_of_memory);
  BOOST_TEST_MESSAGE(describe(big.error()));
}

BOOST_AUTO_TEST_SUITE_END()
