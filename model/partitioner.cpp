// Partitioning rules.
#include "model/partitioner.hpp"

#include "common/log.hpp"

#include <algorithm>
#include <cstdlib>

namespace actorps {

namespace {

// Parses the positive integer after prefix in text; nullopt when text does not start with it or
// the rest is not a positive integer.
std::optional<uint64_t> positive_after(const std::string& text, const std::string& prefix) {
  if (text.compare(0, prefix.size(), prefix) != 0 || text.size() == prefix.size())
    return std::nullopt;
  const std::string rest = text.substr(prefix.size());
  if (rest.find_first_not_of("0123456789") != std::string::npos || rest.size() > 18)
    return std::nullopt;
  uint64_t n = std::strtoull(rest.c_str(), nullptr, 10);
  if (n == 0)
    return std::nullopt;
  return n;
}

// Splits rows into k parts of nearly equal size, the larger ones first (as TF does).
std::vector<int> even_split(int rows, uint64_t k) {
  const int parts = static_cast<int>(std::min<uint64_t>(k, static_cast<uint64_t>(std::max(rows, 1))));
  std::vector<int> out(parts, rows / parts);
  for (int i = 0; i < rows % parts; ++i)
    ++out[i];
  return out;
}

} // namespace

std::optional<partitioner> parse_partitioner(const std::string& text) {
  if (text == "none")
    return partitioner{};
  if (auto k = positive_after(text, "fixed:"))
    return partitioner{partitioner::rule::fixed, *k};
  if (auto b = positive_after(text, "max-bytes:"))
    return partitioner{partitioner::rule::max_bytes, *b};
  return std::nullopt;
}

std::string to_string(const partitioner& p) {
  switch (p.kind) {
    case partitioner::rule::none: return "none";
    case partitioner::rule::fixed: return cat("fixed:", p.value);
    case partitioner::rule::max_bytes: return cat("max-bytes:", p.value);
  }
  return "unknown";
}

std::vector<int> mod_split(int rows, uint32_t parts) {
  std::vector<int> out;
  const auto n = static_cast<int>(std::min<uint32_t>(parts, static_cast<uint32_t>(rows)));
  for (int j = 0; j < n; ++j)
    out.push_back((rows - j + n - 1) / n);
  return out;
}

std::vector<int> partition_rows(const variable_spec& var, const partitioner& p) {
  switch (p.kind) {
    case partitioner::rule::none: break;
    case partitioner::rule::fixed: return even_split(var.rows, p.value);
    case partitioner::rule::max_bytes: {
      const uint64_t row_bytes = static_cast<uint64_t>(var.cols) * sizeof(float);
      const uint64_t rows_per_part = std::max<uint64_t>(1, p.value / std::max<uint64_t>(row_bytes, 1));
      return even_split(var.rows, (static_cast<uint64_t>(var.rows) + rows_per_part - 1) / rows_per_part);
    }
  }
  return {var.rows};
}

} // namespace actorps
