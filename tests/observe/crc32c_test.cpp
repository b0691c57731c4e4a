// Tests of observe/crc32c: the Castagnoli check value and TensorFlow's mask.
#include "observe/crc32c.hpp"

#include <boost/test/unit_test.hpp>

#include <string>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(crc32c)

BOOST_AUTO_TEST_CASE(check_values_of_the_castagnoli_polynomial) {
  std::string nine = "123456789";
  BOOST_TEST(actorps::crc32c(nine.data(), nine.size()) == 0xE3069283u); // (the catalogue's check value)
  std::string zeros(32, '\0');
  BOOST_TEST(actorps::crc32c(zeros.data(), zeros.size()) == 0x8A9136AAu); // (RFC 3720's 32 zero bytes)
  BOOST_TEST(actorps::crc32c(nullptr, 0) == 0u);
}

BOOST_AUTO_TEST_CASE(mask_rotates_right_by_15_and_adds_tensorflows_constant) {
  std::string nine = "123456789";
  uint32_t crc = 0xE3069283u;
  BOOST_TEST(masked_crc32c(nine.data(), nine.size()) == ((crc >> 15) | (crc << 17)) + 0xa282ead8u);
}

BOOST_AUTO_TEST_SUITE_END()
