// Tests of compute/blas_kernels: the note a restarted process logs once, and nothing otherwise.
// (The marker is actorps's own variable; OPENBLAS_CORETYPE is never touched here.)
#include "compute/blas_kernels.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <string>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(blas_kernels)

BOOST_AUTO_TEST_CASE(a_process_not_restarted_has_nothing_to_say) {
  ::unsetenv("ACTORPS_BLAS_RESTART");
  BOOST_TEST(take_blas_note().empty());
}

BOOST_AUTO_TEST_CASE(a_restarted_process_says_so_once_and_does_not_pass_the_marker_on) {
  ::setenv("ACTORPS_BLAS_RESTART", "SkylakeX", 1);
  const std::string note = take_blas_note();
  BOOST_TEST(note.find("restarted with OPENBLAS_CORETYPE=SkylakeX") != std::string::npos, note);
  BOOST_TEST(note.find(blas_core_name()) != std::string::npos, note); // the kernels it runs now
  BOOST_TEST(note.find('\n') == std::string::npos, note);             // one log line
  BOOST_TEST(std::getenv("ACTORPS_BLAS_RESTART") == nullptr);        // (programs it starts inherit nothing)
  BOOST_TEST(take_blas_note().empty());
}

BOOST_AUTO_TEST_CASE(the_core_it_would_choose_is_one_openblas_knows) {
  const char* core = better_blas_core();
  if (core == nullptr) {
    BOOST_TEST_MESSAGE("OpenBLAS runs " << blas_core_name() << " here: nothing to restart for");
    return;
  }
  BOOST_TEST((std::string{core} == "SkylakeX" || std::string{core} == "Haswell"), core);
  BOOST_TEST(std::string{blas_core_name()} == "Prescott");
}

BOOST_AUTO_TEST_SUITE_END()
