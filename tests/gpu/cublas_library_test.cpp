// Tests of gpu/cublas_library (built with the CUDA backend): a library that cannot be loaded is a
// named error and leaves nothing loaded; the build's own cuBLAS loads with every function.
#include "gpu/cublas_library.hpp"

#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <string>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(cublas_library)

BOOST_AUTO_TEST_CASE(a_missing_library_is_named_and_nothing_is_loaded) {
  if (gpu::loaded_cublas() != nullptr) {
    BOOST_TEST_MESSAGE("cuBLAS is loaded in this process already");
    return;
  }
  auto got = gpu::load_cublas("/nonexistent/libactorps-no-cublas.so.13");
  BOOST_REQUIRE(!got);
  BOOST_TEST(got.error() == errc::device_unavailable);
  BOOST_TEST(describe(got.error()).find("cannot load cuBLAS (/nonexistent/libactorps-no-cublas.so.13") != std::string::npos,
             describe(got.error()));
  BOOST_TEST(gpu::loaded_cublas() == nullptr);
}

BOOST_AUTO_TEST_CASE(the_builds_cublas_loads_with_every_function) {
  BOOST_TEST(std::string{gpu::default_cublas_library()}.find("libcublas.so") != std::string::npos);
  auto got = gpu::load_cublas();
  if (!got)
    BOOST_FAIL(describe(got.error()));
  const gpu::cublas_functions* f = *got;
  BOOST_TEST((f->create && f->destroy && f->set_stream && f->set_math_mode && f->sgemm && f->status_string));
  BOOST_TEST(gpu::loaded_cublas() == f);
  BOOST_TEST(*gpu::load_cublas("/elsewhere/libcublas.so") == f); // (loaded once)
  BOOST_TEST(std::string{f->status_string(CUBLAS_STATUS_NOT_INITIALIZED)} == "the library was not initialized");
}

BOOST_AUTO_TEST_SUITE_END()
