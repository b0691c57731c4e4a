// A cluster worker's embedding table: it never holds the table, only the rows of the batch in
// hand. Each step it renumbers the batch's ids to local rows 0..U-1 (in the order they first
// appear: the order the network's table gradient lists them), pulls those rows from the table's
// parts on the shards, and after backprop pushes their gradients back as row slices (TF's
// IndexedSlices). Plain logic without CAF; the worker's actor sends what this returns.
#pragma once

#include "messages/shard_protocol.hpp"
#include "model/layers.hpp"

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace actorps {

/// What row_exchange::renumber does to a batch, apart from the exchange, so that a thread of the
/// worker's batch pipeline does it ahead of the step (data/batch_pipeline's finisher): the id
/// slots rewritten to local rows 0..U-1 in the order they first appear, and the table row of each
/// local row listed. One per thread.
class batch_renumbering {
public:
  /// A table of table_rows rows (ids taken mod it), batches of up to max_slots id slots.
  batch_renumbering(size_t table_rows, size_t max_slots);

  /// Renumbers the id slots of a batch (rows examples of tokens slots) in place; distinct gets
  /// the table row of each local row.
  void renumber(float* slots, int rows, int tokens, std::vector<uint32_t>& distinct);

private:
  touched_rows touched_;
};

class row_exchange {
public:
  /// Table `variable` of `plan`, read through ids of `table_rows` (a power of two: id mod it),
  /// for batches of up to max_slots id slots. REQUIRES: the plan covers the variable (check_parts).
  row_exchange(const placement_plan& plan, uint32_t variable, size_t max_slots);

  /// The bits of the local table a worker's network holds (2^bits rows): enough for the
  /// distinct rows of a batch of max_slots id slots, and no more than the table's.
  static int local_bits(size_t table_rows, size_t max_slots);

  /// Renumbers the id slots of a batch (rows examples of tokens slots) in place to local rows,
  /// and groups the distinct table rows by the part holding them.
  void renumber(float* slots, int rows, int tokens);

  /// The same for a batch renumbered ahead (batch_renumbering): groups `distinct`, what that
  /// listed, by part.
  void adopt(const std::vector<uint32_t>& distinct);

  /// Distinct table rows of the batch (its local rows 0 .. distinct() - 1).
  size_t distinct() const { return table_rows_of_.size(); }

  /// The table row of each local row.
  const std::vector<uint32_t>& table_rows() const { return table_rows_of_; }

  /// The table's columns (values per row).
  uint32_t cols() const { return cols_; }

  /// The shards that hold a part of the table with rows in this batch, in shard order.
  std::vector<uint32_t> shards() const;

  /// The pull of shard s's rows: one range per part there with rows in the batch, or (a part of
  /// more than max_floats values) its rows in runs of at most max_floats values each.
  std::vector<slice_ref> pulls(uint32_t shard, size_t max_floats = SIZE_MAX) const;

  /// Places a pulled row slice (a part's rows, or one run of them as pulls() with max_floats made
  /// them) into local (distinct() x cols() values, by local row). Fails with protocol_error for a
  /// slice this batch did not ask for (another part, other rows, wrong size).
  caf::error place(const variable_slice& slice, float* local, size_t max_floats = SIZE_MAX) const;

  /// Whether slice, which place() would take, holds every row of the batch in local order (the
  /// batch's rows lie in one part and the slice is all of them): the local table itself.
  bool holds_every_row(const variable_slice& slice) const;

  /// The row gradients of shard s's parts: `grad` holds rows of the local table, row j being
  /// local row order[j] (the network's sparse_rows); a local row of the batch the gradient lacks
  /// pushes zeros. Fails with protocol_error when order names a row outside the batch.
  caf::expected<std::vector<variable_slice>> gradients(uint32_t shard, const std::vector<size_t>& order,
                                                       const float* grad) const;

private:
  struct part {
    uint32_t offset = 0;    // of the part in the whole table (row_begin x cols)
    uint32_t row_begin = 0;
    uint32_t shard = 0;
    std::vector<uint32_t> rows;  // this batch's table rows here (as the part stores them), in local order
    std::vector<uint32_t> local; // and their local rows
  };
  size_t part_of(uint32_t row) const;
  // Groups table_rows_of_ by the part holding each row.
  void group();
  // Fills the lookups group() uses instead of a division or a search per row (hashed rows land
  // in any part: a search's branches miss about every other row).
  void index_parts();

  // By mod: row / parts as one multiplication (Lemire's fastdiv: exact for every 32-bit row).
  uint64_t div_magic_ = 0;
  // By div: the part of each bucket's first row, buckets of 2^bucket_shift_ rows being no
  // larger than the smallest part, so a row lies in its bucket's part or the next; part_begin_
  // lists each part's first row, then the table's rows. Empty where parts are too uneven for it.
  int bucket_shift_ = 0;
  std::vector<uint32_t> bucket_part_;
  std::vector<uint64_t> part_begin_;

  uint32_t variable_ = 0;
  uint32_t cols_ = 0;
  bool by_mod_ = false;           // the table's parts hold its rows by row mod parts
  std::vector<part> parts_;       // the table's, in row order
  size_t table_rows_ = 0, max_slots_ = 0;
  std::optional<batch_renumbering> renumbering_; // (made by the first renumber: a worker adopts batches renumbered ahead)
  std::vector<uint32_t> table_rows_of_; // per local row: its table row
};

} // namespace actorps
