// A minimal JSON object writer for metrics lines and summaries (flat objects, one line).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace actorps {

/// Builds one JSON object; keys appear in insertion order. Non-finite numbers become null.
class json_object {
public:
  json_object& add(const std::string& key, const std::string& value);
  json_object& add(const std::string& key, const char* value);
  json_object& add(const std::string& key, double value);
  json_object& add(const std::string& key, int64_t value);
  json_object& add(const std::string& key, int value) { return add(key, static_cast<int64_t>(value)); }
  json_object& add(const std::string& key, bool value);
  json_object& add(const std::string& key, std::optional<double> value);
  /// Adds value verbatim; it must already be valid JSON (a nested object or array).
  json_object& add_raw(const std::string& key, const std::string& json);

  /// Appends every field of other, in its order.
  json_object& merge(const json_object& other);

  /// Returns the object as one line of JSON.
  std::string str() const { return text_ + "}"; }

private:
  void key(const std::string& k);
  std::string text_ = "{";
};

/// Returns the numbers as a JSON array, e.g. "[1, 0, 7]".
std::string json_array(const std::vector<uint64_t>& xs);

/// Returns the strings as a JSON array of string literals, e.g. "[\"Bag\", \"Coat\"]".
std::string json_array(const std::vector<std::string>& xs);

/// Returns s as a JSON string literal, quotes included.
std::string json_quote(const std::string& s);

} // namespace actorps
