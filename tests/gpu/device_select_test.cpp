// Tests of gpu/device_select: explicit CPU, automatic fallback, demanded GPU, memory cap.
#include "gpu/device_select.hpp"

#include "common/errc.hpp"
#include "compute/cpu_backend.hpp"

#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <fstream>
#include <string>

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

// cuBLAS costs ~146 MB of every process that maps it (libcublasLt's static initialisers): a
// process that falls back to the CPU never loads it.
BOOST_AUTO_TEST_CASE(a_fallback_to_the_cpu_never_maps_cublas) {
  if (cuda_device_count()) {
    BOOST_TEST_MESSAGE("a CUDA device is usable here: no fallback to test");
    return;
  }
  auto be = select_backend(device_options{}, "test"); // auto
  BOOST_REQUIRE(be);
  BOOST_TEST(!(*be)->is_gpu());
  std::ifstream maps{"/proc/self/maps"};
  BOOST_REQUIRE(maps.good());
  std::string line, mapped;
  while (std::getline(maps, line))
    if (line.find("libcublas") != std::string::npos)
      mapped = line;
  BOOST_TEST(mapped.empty(), mapped);
}

BOOST_AUTO_TEST_CASE(cpu_mode_gives_the_cpu_backend) {
  device_options opts;
  opts.mode = device_mode::cpu;
  opts.cpu_threads = 1;
  auto be = select_backend(opts, "test");
  BOOST_REQUIRE(be);
  BOOST_TEST(!(*be)->is_gpu());
  BOOST_TEST((*be)->name() == make_cpu_backend(1)->name());
  BOOST_TEST(((*be)->name() == "cpu (OpenBLAS, 1 thread)" || (*be)->name() == "cpu (AVX-512 sgemm, 1 thread)"));
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

BOOST_AUTO_TEST_CASE(memory_policies_parse_and_are_refused_by_name) {
  auto grow = parse_gpu_memory("grow");
  BOOST_REQUIRE(grow);
  BOOST_TEST((grow->kind == gpu_memory_policy::mode::grow));
  auto half = parse_gpu_memory("fraction:0.5");
  BOOST_REQUIRE(half);
  BOOST_TEST((half->kind == gpu_memory_policy::mode::fraction));
  BOOST_TEST(half->fraction == 0.5);
  BOOST_TEST(to_string(*half) == "fraction:0.5");
  BOOST_TEST(parse_gpu_memory("fraction:1").value().fraction == 1.0);
  for (auto bad : {"", "Grow", "fraction", "fraction:", "fraction:0", "fraction:1.5", "fraction:-0.1", "fraction:0.5x",
                   "fraction:nan", "0.5", "allow_growth"}) {
    auto m = parse_gpu_memory(bad);
    BOOST_REQUIRE_MESSAGE(!m, bad);
    BOOST_TEST(m.error() == actorps::errc::invalid_config);
    BOOST_TEST(describe(m.error()).find(std::string{"compute.gpu-memory must be grow or fraction:F"}) != std::string::npos);
    BOOST_TEST(describe(m.error()).find(std::string{"got \""} + bad + "\"") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(the_cpu_fallback_says_a_fraction_does_not_apply_and_reports_its_peak) {
  if (cuda_device_count()) {
    BOOST_TEST_MESSAGE("a CUDA device is usable here: no fallback to test");
    return;
  }
  device_options opts; // auto
  opts.gpu_memory = parse_gpu_memory("fraction:0.25").value();
  std::string said;
  caf::expected<std::unique_ptr<backend>> be{caf::error{}};
  {
    test::stderr_capture log;
    be = select_backend(opts, "test");
    said = log.text();
  }
  BOOST_REQUIRE(be);
  BOOST_TEST(!(*be)->is_gpu());
  BOOST_TEST(said.find("no usable GPU") != std::string::npos, said);
  BOOST_TEST(said.find("compute.gpu-memory = fraction:0.25 applies to GPUs only") != std::string::npos, said);
  BOOST_TEST(std::count(said.begin(), said.end(), '\n') == 1, said); // one line
  BOOST_TEST((*be)->memory().peak == 0u);
  {
    auto a = (*be)->allocate(1000), b = (*be)->allocate(3000);
    BOOST_REQUIRE((a && b));
    BOOST_TEST((*be)->memory().in_use >= 16000u);
  }
  BOOST_TEST((*be)->memory().in_use == 0u);
  BOOST_TEST((*be)->memory().peak >= 16000u);
  BOOST_TEST((*be)->memory().peak < 17000u);
  BOOST_TEST((*be)->memory().reserved == 0u);
  { // grow says nothing of memory
    test::stderr_capture log;
    auto plain = select_backend(device_options{}, "test");
    BOOST_TEST(log.text().find("gpu-memory") == std::string::npos, log.text());
  }
}

BOOST_AUTO_TEST_CASE(a_reserved_fraction_is_all_a_gpu_backend_hands_out, *utf::precondition(cuda_available)) {
  device_options opts;
  opts.mode = device_mode::gpu;
  opts.gpu_memory = parse_gpu_memory("fraction:0.001").value(); // about 80-140 MiB
  auto be = select_backend(opts, "test");
  BOOST_REQUIRE(be);
  const auto reserved = (*be)->memory().reserved;
  BOOST_TEST(reserved > 0u);
  BOOST_TEST_MESSAGE((*be)->name());
  {
    auto small = (*be)->allocate(1 << 20); // 4 MiB
    BOOST_REQUIRE(small);
    auto big = (*be)->allocate(size_t{1} << 30); // 4 GiB
    BOOST_REQUIRE(!big);
    BOOST_TEST(big.error() == actorps::errc::out_of_memory);
    BOOST_TEST(describe(big.error()).find("compute.gpu-memory = fraction:0.001") != std::string::npos, describe(big.error()));
    // the arena is filled to its end, then freed and filled again
    std::vector<buffer> parts;
    for (;;) {
      auto p = (*be)->allocate(1 << 18);
      if (!p)
        break;
      parts.push_back(std::move(*p));
    }
    BOOST_TEST(parts.size() >= (reserved - (4u << 20)) / (1u << 20) - 1);
    const auto peak = (*be)->memory().peak;
    BOOST_TEST(peak <= reserved);
    parts.clear();
    auto again = (*be)->allocate(1 << 18);
    BOOST_TEST(static_cast<bool>(again));
    BOOST_TEST((*be)->memory().peak == peak);
  }
  BOOST_TEST((*be)->memory().in_use == 0u);
}

BOOST_AUTO_TEST_CASE(growing_gpu_memory_reports_its_peak, *utf::precondition(cuda_available)) {
  device_options opts;
  opts.mode = device_mode::gpu;
  auto be = select_backend(opts, "test");
  BOOST_REQUIRE(be);
  BOOST_TEST((*be)->memory().reserved == 0u);
  {
    auto a = (*be)->allocate(size_t{1} << 28); // 1 GiB: taken when asked for
    BOOST_REQUIRE(a);
    BOOST_TEST((*be)->memory().in_use == size_t{1} << 30);
  }
  BOOST_TEST((*be)->memory().in_use == 0u);
  BOOST_TEST((*be)->memory().peak == size_t{1} << 30);
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
