// Rows copied from and to scattered positions (see row_prefetch.hpp), in vector clones: in
// baseline x86-64's 16-byte moves the ps node's gather of a push's rows asked back (the
// text-hash cluster, its destination a worker's shared heap) ran slower than one memmove call
// per row; in AVX-512 it took 31 us a step instead of 74.
#include "compute/row_prefetch.hpp"

#include "common/vector_clones.hpp"

namespace actorps {

ACTORPS_VECTOR_CLONES
void gather_rows(const float* table, size_t cols, const size_t* at, size_t count, float* out) {
  for (size_t j = 0; j < count; ++j) {
    if (j + rows_ahead < count)
      prefetch_floats<0>(table + at[j + rows_ahead], cols);
    copy_row(table + at[j], cols, out + j * cols);
  }
}

ACTORPS_VECTOR_CLONES
void copy_rows_from(const float* from, size_t cols, const uint32_t* rows, size_t count, float* out) {
  for (size_t j = 0; j < count; ++j)
    copy_row(from + size_t{rows[j]} * cols, cols, out + j * cols);
}

ACTORPS_VECTOR_CLONES
void copy_rows_to(const float* from, size_t cols, const uint32_t* rows, size_t count, float* out) {
  for (size_t j = 0; j < count; ++j)
    copy_row(from + j * cols, cols, out + size_t{rows[j]} * cols);
}

} // namespace actorps
