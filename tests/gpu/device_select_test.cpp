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

BOOST_AUTO_TEST_CASE(device_names_as_written_here_and_in_tensorflow) {
  struct good {
    const char* text;
    device_mode kind;
    int index;
  };
  for (auto g : {good{"cpu:0", device_mode::cpu, 0}, good{"gpu:3", device_mode::gpu, 3}, good{"GPU:1", device_mode::gpu, 1},
                 good{"/device:GPU:2", device_mode::gpu, 2}, good{"/gpu:0", device_mode::gpu, 0},
                 good{"/job:worker/task:1/device:CPU:0", device_mode::cpu, 0}}) {
    auto d = parse_device_name(g.text);
    BOOST_REQUIRE_MESSAGE(d, g.text);
    BOOST_TEST((d->kind == g.kind), g.text);
    BOOST_TEST(d->index == g.index, g.text);
  }
  for (auto bad : {"", "gpu", "gpu:", "tpu:0", "gpu:-1", "gpu:x", "cpu0", "/device:GPU"}) {
    auto d = parse_device_name(bad);
    BOOST_REQUIRE_MESSAGE(!d, bad);
    BOOST_TEST(describe(d.error()).find(std::string{"\""} + bad + "\" is not a device") != std::string::npos, describe(d.error()));
  }
  BOOST_TEST(tf_device_name("worker", 0, {device_mode::gpu, 1}) == "/job:worker/task:0/device:GPU:1");
  BOOST_TEST(tf_device_name("ps", 2, {device_mode::cpu, 0}) == "/job:ps/task:2/device:CPU:0");
}

BOOST_AUTO_TEST_SUITE_END()
