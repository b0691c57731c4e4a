// A scope in which the calling thread's SSE arithmetic flushes denormal results to zero and reads
// denormal inputs as zero (MXCSR FTZ + DAZ), as GPU math and most trainers do. Without it a
// momentum slot whose gradient stays 0 decays into denormals after a few hundred steps (0.9^k),
// and every update of it then takes a microcode assist, ~100x a normal multiply-add.
#pragma once

#if defined(__SSE2__)
#  include <xmmintrin.h>
#endif

namespace actorps {

/// Sets FTZ and DAZ for its lifetime and restores the caller's setting after it.
class denormals_flushed {
public:
#if defined(__SSE2__)
  denormals_flushed() : saved_(_mm_getcsr()) {
    _mm_setcsr(saved_ | flush_bits);
  }

  ~denormals_flushed() {
    _mm_setcsr(saved_);
  }
#else
  denormals_flushed() = default;
#endif

  denormals_flushed(const denormals_flushed&) = delete;
  denormals_flushed& operator=(const denormals_flushed&) = delete;

private:
#if defined(__SSE2__)
  static constexpr unsigned flush_bits = 0x8040u; // FTZ (bit 15) | DAZ (bit 6)
  unsigned saved_;
#endif
};

} // namespace actorps
