// Tests of compute/host_ops: finiteness over whole tensors.
#include "compute/host_ops.hpp"

#include <boost/test/unit_test.hpp>

#include <limits>
#include <vector>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(host_ops)

BOOST_AUTO_TEST_CASE(all_finite_finds_nan_and_inf_anywhere) {
  std::vector<float> xs(1037, 1.5f);
  xs[3] = -std::numeric_limits<float>::max();
  xs[4] = std::numeric_limits<float>::denorm_min();
  BOOST_TEST(all_finite(xs.data(), xs.size()));
  BOOST_TEST(all_finite(xs.data(), 0));
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()})
    for (size_t at : {size_t{0}, size_t{517}, xs.size() - 1}) {
      auto ys = xs;
      ys[at] = bad;
      BOOST_TEST(!all_finite(ys.data(), ys.size()), "value " << bad << " at " << at);
    }
}

BOOST_AUTO_TEST_SUITE_END()
