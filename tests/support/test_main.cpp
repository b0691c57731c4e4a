// The Boost.Test runner main shared by every test module.
#define BOOST_TEST_MODULE actorps
#include <boost/test/unit_test.hpp>
