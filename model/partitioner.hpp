// Splitting variables by rows, as TF's fixed_size_partitioner and variable_axis_size_partitioner
// do (cluster.partitioner): the rule, its text form, and the row counts of each part. Where the
// parts go is control/placement's job. Plain logic.
#pragma once

#include "model/variable_spec.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace actorps {

/// How variables are split by rows before placement.
struct partitioner {
  enum class rule {
    none,      ///< every variable whole
    fixed,     ///< fixed:K -- every variable in min(K, rows) parts of nearly equal rows
    max_bytes, ///< max-bytes:B -- as few parts of nearly equal rows as keep each <= B bytes
  };
  rule kind = rule::none;
  uint64_t value = 0; ///< K or B
};

/// Parses "none", "fixed:K" (K >= 1) or "max-bytes:B" (B >= 1); nullopt for anything else.
std::optional<partitioner> parse_partitioner(const std::string& text);

/// Returns the partitioner as parse_partitioner reads it.
std::string to_string(const partitioner& p);

/// Returns the row counts var is split into under p (one entry: not split). A single row larger
/// than max-bytes stays one part: variables are split by rows only.
std::vector<int> partition_rows(const variable_spec& var, const partitioner& p);

/// The rows of each of min(parts, rows) parts of a table of `rows` rows split by "mod" (TF's
/// partition strategy): part j holds the rows j, j + parts, ... (the first rows % parts parts one
/// more).
std::vector<int> mod_split(int rows, uint32_t parts);

} // namespace actorps
