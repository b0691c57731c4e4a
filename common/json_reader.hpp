// A small JSON reader for the files actorps writes and reads back (the model description in an
// exported .npz, summary.json in tests): objects, arrays, strings, numbers, true, false, null.
#pragma once

#include <caf/expected.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace actorps {

/// One parsed JSON value. Objects keep their keys sorted (duplicates: the last one wins).
struct json_value {
  enum class kind { null, boolean, number, string, array, object };
  kind type = kind::null;
  bool flag = false;
  double number = 0.0;
  std::string text;
  std::vector<json_value> items;               ///< array elements
  std::map<std::string, json_value> members;   ///< object members

  bool is(kind k) const { return type == k; }

  /// Returns member key of an object, or nullptr when absent or not an object.
  const json_value* find(const std::string& key) const;
};

/// Parses text (one value, surrounded by optional white space). Errors are corrupt_data naming
/// `what` and the byte offset, e.g. "model.json: byte 17: expected ':'".
caf::expected<json_value> parse_json(const std::string& text, const std::string& what);

} // namespace actorps
