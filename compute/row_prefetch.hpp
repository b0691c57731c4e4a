// Reading or writing a table's rows at scattered positions (an embedding table's sparse update,
// its rows gathered for a pull): each row is a cache miss (and a TLB miss) of its own, so the
// loops over rows ask for the row a number of rows ahead while they work on this one. On 2 cores of
// an AVX-512 Xeon an Adagrad update of 4,400 rows of 32 in a 2 x 128 MiB table took 1.10 ms row
// by row and 0.50 ms fetching 4 rows ahead (with 2 MiB pages: 0.86 and 0.28 ms). On an AMD EPYC,
// with the update in vector lanes and 2 MiB pages, cold rows: 141 us 4 ahead, 105 us 8 ahead,
// 75 us 16 ahead, 57-60 us 32 ahead (as much 48 or 64 ahead); a gather of them 38 us 4 ahead,
// 22-24 us 32 ahead (18 us 64 ahead, copied in vector blocks). The text-hash cluster 1 x 2 ran
// 1.00-1.16x with 32 ahead against 4; one process 1.05-1.07x with 64 against 32 (the bags' ids
// and the update's rows; 128 ran as 64), the cluster within the noise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace actorps {

/// How many rows ahead the loops over scattered rows ask for.
constexpr size_t rows_ahead = 64;

/// Asks for the cache lines of n floats at p, to be written (Write = 1) or read (0): a hint, no
/// fault and no effect on the values.
template <int Write = 1>
inline void prefetch_floats(const float* p, size_t n) {
  const char* first = reinterpret_cast<const char*>(p);
  const char* last = reinterpret_cast<const char*>(p + n);
  for (const char* c = first; c < last; c += 64)
    __builtin_prefetch(c, Write);
  if (n > 0)
    __builtin_prefetch(last - 1, Write); // (a row that does not start on a line reaches into one more)
}

/// Copies one row of n floats (a table's row: tens of them) in 64-byte blocks, inline. std::copy
/// calls a memmove per row: on an AMD EPYC a cold gather of 4,400 rows of 32 took 72-76 us with
/// it and 31 us with this (24 us in AVX-512 moves alone); the memmove had been half the ps node's
/// thread in the text-hash cluster.
inline void copy_row(const float* from, size_t n, float* to) {
  using block = float __attribute__((vector_size(64)));
  size_t k = 0;
  for (; k + 16 <= n; k += 16) {
    block b;
    std::memcpy(&b, from + k, sizeof b);
    std::memcpy(to + k, &b, sizeof b);
  }
  for (; k < n; ++k)
    to[k] = from[k];
}

/// Adds one row of n floats (from) into another (to), in 64-byte blocks, inline (a sync step's
/// row gradients merged: a call per row of tens of floats would cost more than the adds).
inline void add_row(const float* from, size_t n, float* to) {
  using block = float __attribute__((vector_size(64)));
  size_t k = 0;
  for (; k + 16 <= n; k += 16) {
    block a, b;
    std::memcpy(&a, to + k, sizeof a);
    std::memcpy(&b, from + k, sizeof b);
    a += b;
    std::memcpy(to + k, &a, sizeof a);
  }
  for (; k < n; ++k)
    to[k] += from[k];
}

/// Sets one row of n floats to zero with vector stores, inline. GCC makes a loop storing a
/// constant (std::fill, or a copy from a row of zeros) one memset or memcpy call per row, so the
/// zero is read as a value it cannot know.
inline void zero_row(float* to, size_t n) {
  static const volatile float zero_value = 0.0f;
  const float z = zero_value;
  using block = float __attribute__((vector_size(64)));
  const block zeros = block{} + z;
  size_t k = 0;
  for (; k + 16 <= n; k += 16)
    std::memcpy(to + k, &zeros, sizeof zeros);
  for (; k < n; ++k)
    to[k] = z;
}

/// Copies `count` rows of `cols` floats, row j from table + at[j], into out (row after row),
/// asking for each row rows_ahead rows ahead (the table: far larger than the caches).
void gather_rows(const float* table, size_t cols, const size_t* at, size_t count, float* out);

/// Row j of out (rows of `cols` floats) becomes row rows[j] of from, for j < count: rows picked
/// from a table in cache (a worker's local table, a gradient).
void copy_rows_from(const float* from, size_t cols, const uint32_t* rows, size_t count, float* out);

/// Row rows[j] of out becomes row j of from, for j < count.
void copy_rows_to(const float* from, size_t cols, const uint32_t* rows, size_t count, float* out);

} // namespace actorps
