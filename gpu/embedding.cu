// Embedding bags on the device (see embedding.cuh); ids decoded as compute/token_ids.hpp writes them.
#include "gpu/embedding.cuh"
#include "gpu/launch.cuh"

namespace actorps::gpu {

namespace {

constexpr unsigned id_limit = 1u << 30; // (compute/token_ids.hpp: token_id_bits)

// Whether slot holds an id, and its table row.
__device__ bool row_of(float slot, unsigned mask, size_t& row) {
  const unsigned bits = __float_as_uint(slot);
  if (bits == 0 || bits > id_limit)
    return false;
  row = (bits - 1) & mask;
  return true;
}

__global__ void bag_kernel(bag_geometry g, const float* ids, const float* table, float* out) {
  const size_t n = static_cast<size_t>(g.rows) * g.dim;
  const auto mask = static_cast<unsigned>(g.table_rows - 1);
  ACTORPS_GRID_STRIDE(i, n) {
    const size_t r = i / g.dim, d = i % g.dim;
    const float* slots = ids + r * g.tokens;
    float sum = 0.0f;
    int count = 0;
    size_t row;
    for (int t = 0; t < g.tokens && row_of(slots[t], mask, row); ++t, ++count)
      sum += table[row * g.dim + d];
    out[i] = g.mean && count > 1 ? sum / static_cast<float>(count) : sum;
  }
}

__global__ void zero_rows_kernel(bag_geometry g, const float* ids, float* dtable) {
  const size_t n = static_cast<size_t>(g.rows) * g.tokens;
  const auto mask = static_cast<unsigned>(g.table_rows - 1);
  ACTORPS_GRID_STRIDE(i, n) {
    size_t row;
    if (row_of(ids[i], mask, row))
      for (int d = 0; d < g.dim; ++d)
        dtable[row * g.dim + d] = 0.0f;
  }
}

__global__ void add_rows_kernel(bag_geometry g, const float* ids, const float* dout, float* dtable) {
  const size_t n = static_cast<size_t>(g.rows) * g.dim;
  const auto mask = static_cast<unsigned>(g.table_rows - 1);
  ACTORPS_GRID_STRIDE(i, n) {
    const size_t r = i / g.dim, d = i % g.dim;
    const float* slots = ids + r * g.tokens;
    int count = 0;
    size_t row;
    while (count < g.tokens && row_of(slots[count], mask, row))
      ++count;
    const float share = (g.mean && count > 1 ? 1.0f / static_cast<float>(count) : 1.0f) * dout[i];
    for (int t = 0; t < count; ++t) {
      row_of(slots[t], mask, row);
      atomicAdd(&dtable[row * g.dim + d], share);
    }
  }
}

} // namespace

cudaError_t launch_embedding_bag(const bag_geometry& g, const float* ids, const float* table, float* out, cudaStream_t s) {
  const size_t n = static_cast<size_t>(g.rows) * g.dim;
  if (n == 0)
    return cudaSuccess;
  bag_kernel<<<grid_for(n), block_threads, 0, s>>>(g, ids, table, out);
  return cudaGetLastError();
}

cudaError_t launch_embedding_bag_backward(const bag_geometry& g, const float* ids, const float* dout, float* dtable,
                                          cudaStream_t s) {
  const size_t n = static_cast<size_t>(g.rows) * g.tokens;
  if (n == 0)
    return cudaSuccess;
  zero_rows_kernel<<<grid_for(n), block_threads, 0, s>>>(g, ids, dtable);
  const size_t values = static_cast<size_t>(g.rows) * g.dim;
  add_rows_kernel<<<grid_for(values), block_threads, 0, s>>>(g, ids, dout, dtable);
  return cudaGetLastError();
}

} // namespace actorps::gpu
