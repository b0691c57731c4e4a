// ACTORPS_VECTOR_CLONES: compiles a hot loop for AVX-512, AVX2 and baseline x86-64, picked at
// load time (GCC's target_clones, an ifunc); nothing elsewhere. For plain loops the compiler can
// vectorise (the CPU backend's elementwise loops, the wire's precision conversions).
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#  define ACTORPS_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#  define ACTORPS_VECTOR_CLONES
#endif
