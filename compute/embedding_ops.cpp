// Embedding bags on the host (see embedding_ops.hpp).
#include "compute/embedding_ops.hpp"

#include "common/vector_clones.hpp"
#include "compute/row_prefetch.hpp"
#include "compute/token_ids.hpp"

#include <algorithm>

namespace actorps {

namespace {

// The ids of example r: calls fn(table row) for each, in slot order; returns their count.
template <class F>
int each_id(const bag_geometry& g, const float* ids, int r, F fn) {
  const float* slots = ids + static_cast<size_t>(r) * static_cast<size_t>(g.tokens);
  const auto mask = static_cast<uint32_t>(g.table_rows - 1);
  int n = 0;
  uint32_t id = 0;
  for (int t = 0; t < g.tokens && decode_token(slots[t], id); ++t, ++n)
    fn(static_cast<size_t>(id & mask));
  return n;
}

} // namespace

ACTORPS_VECTOR_CLONES
void embedding_bag_host(const bag_geometry& g, const float* ids, const float* table, float* out) {
  const auto dim = static_cast<size_t>(g.dim);
  // One process's table is far larger than the caches and the rows lie scattered over it: a
  // cursor rows_ahead ids ahead of the sums asks for each id's row.
  const auto mask = static_cast<uint32_t>(g.table_rows - 1);
  id_cursor ahead{ids, static_cast<size_t>(g.rows) * static_cast<size_t>(g.tokens)};
  auto ask_next = [&] {
    uint32_t id = 0;
    if (ahead.next(id))
      prefetch_floats<0>(table + static_cast<size_t>(id & mask) * dim, dim);
  };
  for (size_t k = 0; k < rows_ahead; ++k)
    ask_next();
  for (int r = 0; r < g.rows; ++r) {
    float* o = out + static_cast<size_t>(r) * dim;
    std::fill(o, o + dim, 0.0f);
    const int n = each_id(g, ids, r, [&](size_t row) {
      ask_next();
      const float* v = table + row * dim;
      for (size_t d = 0; d < dim; ++d)
        o[d] += v[d];
    });
    if (g.mean && n > 1)
      for (size_t d = 0; d < dim; ++d)
        o[d] /= static_cast<float>(n);
  }
}

ACTORPS_VECTOR_CLONES
void embedding_bag_backward_host(const bag_geometry& g, const float* ids, const float* dout, float* dtable) {
  const auto dim = static_cast<size_t>(g.dim);
  for (int r = 0; r < g.rows; ++r)
    each_id(g, ids, r, [&](size_t row) { zero_row(dtable + row * dim, dim); }); // (not a memset call per id)
  for (int r = 0; r < g.rows; ++r) {
    int n = each_id(g, ids, r, [](size_t) {});
    const float scale = g.mean && n > 1 ? 1.0f / static_cast<float>(n) : 1.0f;
    const float* d = dout + static_cast<size_t>(r) * dim;
    each_id(g, ids, r, [&](size_t row) {
      float* t = dtable + row * dim;
      for (size_t k = 0; k < dim; ++k)
        t[k] += scale * d[k];
    });
  }
}

} // namespace actorps
