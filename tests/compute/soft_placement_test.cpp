// Tests of compute/soft_placement: a backend without a kernel runs that op on the CPU with one
// log line naming it (the same results, bit for bit, as the CPU backend's); without soft
// placement it is refused naming the op; a complete backend is left as it is.
#include "compute/soft_placement.hpp"

#include "compute/cpu_backend.hpp"

#include "tests/support/helpers.hpp"
#include "tests/support/lacking_backend.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>

using namespace actorps;
using actorps::test::lacking_backend;
using actorps::test::random_values;

namespace {

// Pools 2 examples of 6x6x3 by 3x3 windows with stride 2 (maxpool and its backward) on be;
// returns the pooled values, the argmax and the input gradient.
std::vector<std::vector<float>> pool_on(backend& be) {
  window_geometry g;
  g.in_h = g.in_w = 6;
  g.channels = 3;
  g.out_h = g.out_w = 2;
  g.k_h = g.k_w = 3;
  g.stride = 2;
  const int n = 2;
  const size_t in = n * g.in_size(), out = size_t(n) * g.positions() * g.channels;
  std::vector<std::vector<float>> host = {random_values(in, 3), std::vector<float>(out), std::vector<float>(out),
                                          random_values(out, 4), std::vector<float>(in)};
  std::vector<buffer> b;
  for (auto& h : host) {
    b.push_back(std::move(*be.allocate(h.size())));
    be.upload(h.data(), h.size(), b.back().data());
  }
  be.maxpool(g, n, b[0].data(), b[1].data(), b[2].data());
  be.maxpool_backward(g, n, b[3].data(), b[2].data(), b[4].data());
  be.scale(in, 0.5f, b[4].data()); // (an op it has: stays on the device)
  for (size_t i = 0; i < host.size(); ++i)
    BOOST_REQUIRE(!be.download(b[i].data(), host[i].size(), host[i].data()));
  BOOST_REQUIRE(!be.sync());
  return host;
}

} // namespace

BOOST_AUTO_TEST_SUITE(soft_placement)

BOOST_AUTO_TEST_CASE(a_missing_kernel_runs_on_the_cpu_with_one_line_naming_it) {
  auto want = pool_on(*make_cpu_backend(1));
  std::string said;
  {
    test::stderr_capture log;
    auto be = place_softly(std::make_unique<lacking_backend>(std::set<backend_op>{backend_op::maxpool}), true, 1, "w0");
    BOOST_REQUIRE(be);
    BOOST_TEST((*be)->has_kernel(backend_op::maxpool)); // (the wrapper has them all)
    BOOST_TEST((*be)->name().find("soft placement") != std::string::npos);
    for (int twice = 0; twice < 2; ++twice)
      BOOST_TEST((pool_on(**be) == want)); // bit for bit; the lacking backend's maxpool would fail sync()
    said = log.text();
  }
  BOOST_TEST(said.find("w0: soft placement: cpu without kernels has no kernel for maxpool; it runs on "
                       + make_cpu_backend(1)->name()) != std::string::npos, said);
  BOOST_TEST(std::count(said.begin(), said.end(), '\n') == 1, said); // once, however often it runs
}

BOOST_AUTO_TEST_CASE(a_backend_without_kernels_at_all_computes_what_the_cpu_does) {
  auto want = pool_on(*make_cpu_backend(1));
  test::stderr_capture log;
  auto be = place_softly(std::make_unique<lacking_backend>(lacking_backend::every_op()), true, 1, "w0");
  BOOST_REQUIRE(be);
  BOOST_TEST((pool_on(**be) == want));
  const auto said = log.text();
  for (auto op : {"maxpool;", "maxpool_backward;", "scale;"})
    BOOST_TEST(said.find(std::string{"no kernel for "} + op) != std::string::npos, said);
}

BOOST_AUTO_TEST_CASE(without_soft_placement_a_missing_kernel_is_refused_by_name) {
  auto be = place_softly(std::make_unique<lacking_backend>(std::set<backend_op>{backend_op::maxpool, backend_op::gemm}),
                         false, 1, "w0");
  BOOST_REQUIRE(!be);
  BOOST_TEST(be.error() == actorps::errc::invalid_config);
  BOOST_TEST(describe(be.error()) == "invalid_config: compute.soft-placement = false but cpu without kernels has no kernel "
                                     "for gemm, maxpool", describe(be.error()));
}

BOOST_AUTO_TEST_CASE(a_backend_with_every_kernel_is_left_as_it_is) {
  auto cpu = make_cpu_backend(1);
  auto* raw = cpu.get();
  BOOST_TEST(missing_kernels(*cpu).empty());
  auto be = place_softly(std::move(cpu), false, 1, "w0");
  BOOST_REQUIRE(be);
  BOOST_TEST(be->get() == raw);
  BOOST_TEST((missing_kernels(lacking_backend{{backend_op::dropout, backend_op::gemm}}) ==
              std::vector<backend_op>{backend_op::gemm, backend_op::dropout}));
}

BOOST_AUTO_TEST_CASE(every_op_has_a_name) {
  for (auto op : all_backend_ops)
    BOOST_TEST(std::string{to_string(op)} != "unknown");
  BOOST_TEST(std::string{to_string(backend_op::maxpool_backward)} == "maxpool_backward");
}

BOOST_AUTO_TEST_SUITE_END()
