// Which ranges of which variables one shard holds, from the placement plan: the one check of a
// message's ranges, used by the shard's store and by the aggregator in front of it (which must
// refuse a malformed push before it counts for a step). Plain data; no CAF actor code.
#pragma once

#include "control/gradient_spans.hpp"
#include "messages/shard_protocol.hpp"

#include <caf/expected.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace actorps {

class shard_layout {
public:
  /// An empty layout (holds nothing) for shard `shard`.
  explicit shard_layout(uint32_t shard = 0) : shard_(shard) {}

  /// The parts of `plan` that shard `shard` holds, in parts_of() order.
  /// REQUIRES: the plan is consistent (check_parts) and shard < plan.shards.
  shard_layout(const placement_plan& plan, uint32_t shard);

  /// Returns the position (in parts_of() order) of the part that holds [offset, offset + count)
  /// of variable `var`; errors: unknown_variable (not held here), shape_mismatch (outside the
  /// ranges held, named in the message).
  caf::expected<size_t> locate(uint32_t var, uint32_t offset, size_t count) const;

  /// Returns the position of the part of table `var` that starts at `offset` and holds every
  /// row of `rows`, for `values` floats (rows x the table's columns). Errors: unknown_variable
  /// (not held here), protocol_error (rows of a variable that is not a table), shape_mismatch (no
  /// part starts there, a row outside the part, or values that are not the rows' size).
  caf::expected<size_t> locate_rows(uint32_t var, uint32_t offset, const row_ids& rows, size_t values) const;

  /// Checks a push's gradient slices from `worker`: each held here (a row slice as locate_rows
  /// says), each finite; with `at`, slice i's values are at[i] (gradient_spans). Returns the
  /// position of each slice's part; errors as locate(), or non_finite.
  caf::expected<std::vector<size_t>> check_gradients(uint32_t worker, const std::vector<variable_slice>& grads,
                                                     const gradient_spans* at = nullptr) const;

  /// Checks a pull's size: at most every value held here, once (one reply stays bounded).
  caf::error check_pull(uint32_t worker, const std::vector<slice_ref>& ranges) const;

  /// Checks the rows a push from `worker` asks back (push_request.reads): each names rows of a
  /// table part held here (as locate_rows says), at most every value held here in all. Returns
  /// the position of each one's part; errors: protocol_error for a range that names no rows, else
  /// as locate_rows() and check_pull().
  caf::expected<std::vector<size_t>> check_reads(uint32_t worker, const std::vector<slice_ref>& reads) const;

  /// Checks a push's form apart from its ranges: its part number, the reply precision it asks
  /// for, its top-k share (finite, in [0, 1]) and that only its last part asks rows back.
  caf::error check_push_form(const push_request& req) const;

  size_t parts() const { return parts_.size(); }
  /// The floats held here in all.
  size_t floats() const { return floats_; }
  uint32_t shard() const { return shard_; }

private:
  struct part {
    uint32_t offset = 0;
    size_t floats = 0;
    std::string name;
    uint32_t row_begin = 0; // the part's rows of its variable: [row_begin, row_begin + rows)
    uint32_t rows = 0;
    uint32_t cols = 0;
    bool table = false;
  };
  uint32_t shard_ = 0;
  std::vector<std::vector<size_t>> held_; // variable -> positions in parts_
  std::vector<part> parts_;
  size_t floats_ = 0;
};

} // namespace actorps
