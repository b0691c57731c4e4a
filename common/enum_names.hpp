// Parsing an enumeration from the names its to_string() gives (options like "elu", "momentum").
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace actorps {

/// Returns the value among `all` whose to_string() equals name, or nullopt.
template <class Enum, size_t N>
std::optional<Enum> parse_by_name(const std::string& name, const Enum (&all)[N]) {
  for (Enum value : all)
    if (name == to_string(value))
      return value;
  return std::nullopt;
}

/// Returns the names of `all` joined by ", " (for messages listing the accepted values).
template <class Enum, size_t N>
std::string names_of(const Enum (&all)[N]) {
  std::string out;
  for (Enum value : all)
    out += (out.empty() ? "" : ", ") + std::string{to_string(value)};
  return out;
}

} // namespace actorps
