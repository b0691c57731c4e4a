// Reading an embedding table whole without holding it: its rows in table order, a chunk at a
// time, each chunk read from every part that holds rows of it (one range of each part's stored
// rows: a part's rows are a contiguous range under "div", every parts-th row under "mod"). Plain
// logic; the chief's actor sends the reads and hands each completed chunk on (the weights digest,
// a kept model's file, the evaluation's rows).
#pragma once

#include "messages/shard_protocol.hpp"

#include <caf/error.hpp>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace actorps {

class table_sweep {
public:
  /// Table `variable` of `plan` in chunks of at most max_floats values (whole rows, at least
  /// one). REQUIRES: the plan covers the variable.
  table_sweep(const placement_plan& plan, uint32_t variable, size_t max_floats);

  uint32_t variable() const { return variable_; }
  uint32_t cols() const { return cols_; }
  /// The table's rows.
  size_t rows() const { return rows_; }
  size_t chunks() const { return (rows_ + chunk_rows_ - 1) / chunk_rows_; }
  /// Chunk i holds the table rows [first_row(i), first_row(i) + rows_of(i)).
  size_t first_row(size_t i) const { return i * chunk_rows_; }
  size_t rows_of(size_t i) const;

  /// The reads of chunk i: (shard, range of a part's stored rows), one per part with rows in it.
  std::vector<std::pair<uint32_t, slice_ref>> reads(size_t i) const;

  /// Places a read's reply into chunk i (rows_of(i) x cols() values, by table row). Fails with
  /// protocol_error, chunk unchanged, for a slice that is not one of chunk i's reads.
  caf::error place(size_t i, const variable_slice& got, float* chunk) const;

private:
  struct part {
    uint32_t shard = 0;
    size_t stored_begin = 0; // its first stored row
    size_t rows = 0;
    size_t first = 0;        // the table row of its first stored row
  };
  // Part p's stored rows holding table rows of [a, b): [lo, hi) counted from its first.
  std::pair<size_t, size_t> span(const part& p, size_t a, size_t b) const;

  uint32_t variable_ = 0;
  uint32_t cols_ = 0;
  size_t rows_ = 0;
  size_t chunk_rows_ = 1;
  size_t stride_ = 1;        // table rows between a part's consecutive stored rows
  std::vector<part> parts_;
};

} // namespace actorps
