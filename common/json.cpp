// JSON quoting and number formatting.
#include "common/json.hpp"

#include <cmath>
#include <cstdio>

namespace actorps {

std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string json_array(const std::vector<uint64_t>& xs) {
  std::string out = "[";
  for (size_t i = 0; i < xs.size(); ++i)
    out += (i > 0 ? ", " : "") + std::to_string(xs[i]);
  return out + "]";
}

void json_object::key(const std::string& k) {
  if (text_.size() > 1)
    text_ += ", ";
  text_ += json_quote(k) + ": ";
}

json_object& json_object::add(const std::string& k, const std::string& value) {
  key(k);
  text_ += json_quote(value);
  return *this;
}

json_object& json_object::add(const std::string& k, const char* value) {
  return add(k, std::string{value});
}

json_object& json_object::add(const std::string& k, double value) {
  key(k);
  if (!std::isfinite(value)) {
    text_ += "null";
  } else {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", value);
    text_ += buf;
  }
  return *this;
}

json_object& json_object::add(const std::string& k, int64_t value) {
  key(k);
  text_ += std::to_string(value);
  return *this;
}

json_object& json_object::add(const std::string& k, bool value) {
  key(k);
  text_ += value ? "true" : "false";
  return *this;
}

json_object& json_object::add(const std::string& k, std::optional<double> value) {
  if (value)
    return add(k, *value);
  key(k);
  text_ += "null";
  return *this;
}

json_object& json_object::merge(const json_object& other) {
  if (other.text_.size() > 1)
    text_ += (text_.size() > 1 ? ", " : "") + other.text_.substr(1);
  return *this;
}

json_object& json_object::add_raw(const std::string& k, const std::string& json) {
  key(k);
  text_ += json;
  return *this;
}

std::string json_array(const std::vector<std::string>& xs) {
  std::string out = "[";
  for (size_t i = 0; i < xs.size(); ++i)
    out += (i > 0 ? ", " : "") + json_quote(xs[i]);
  return out + "]";
}

} // namespace actorps
