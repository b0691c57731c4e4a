// Recursive descent over the text; depth-limited so hostile input cannot exhaust the stack.
#include "common/json_reader.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "common/utf8.hpp"

#include <cstdlib>
#include <cstring>

namespace actorps {

const json_value* json_value::find(const std::string& key) const {
  if (type != kind::object)
    return nullptr;
  auto i = members.find(key);
  return i == members.end() ? nullptr : &i->second;
}

namespace {

constexpr int max_depth = 64;

class parser {
public:
  parser(const std::string& text, const std::string& what) : s_(text), what_(what) {}

  caf::expected<json_value> document() {
    json_value v;
    if (!value(v, 0))
      return error();
    skip_space();
    if (pos_ != s_.size())
      fail("trailing characters after the value");
    if (!why_.empty())
      return error();
    return v;
  }

private:
  caf::error error() const {
    return caf::make_error(errc::corrupt_data, cat(what_, ": byte ", pos_, ": ", why_));
  }

  bool fail(const std::string& why) {
    if (why_.empty())
      why_ = why;
    return false;
  }

  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t'))
      ++pos_;
  }

  bool literal(const char* word) {
    size_t n = std::strlen(word);
    if (s_.compare(pos_, n, word) != 0)
      return fail(cat("expected ", word));
    pos_ += n;
    return true;
  }

  bool value(json_value& v, int depth) {
    if (depth > max_depth)
      return fail("nested too deeply");
    skip_space();
    if (pos_ >= s_.size())
      return fail("unexpected end of text");
    char c = s_[pos_];
    switch (c) {
      case '{': return object(v, depth);
      case '[': return array(v, depth);
      case '"': v.type = json_value::kind::string; return string(v.text);
      case 't': v.type = json_value::kind::boolean; v.flag = true; return literal("true");
      case 'f': v.type = json_value::kind::boolean; v.flag = false; return literal("false");
      case 'n': v.type = json_value::kind::null; return literal("null");
      default: return number(v);
    }
  }

  bool number(json_value& v) {
    const char* begin = s_.c_str() + pos_;
    size_t n = 0;
    while (pos_ + n < s_.size() && std::strchr("+-0123456789.eE", s_[pos_ + n]) != nullptr)
      ++n;
    if (n == 0)
      return fail(cat("unexpected character '", s_[pos_], "'"));
    std::string token{begin, n};
    char* end = nullptr;
    v.number = std::strtod(token.c_str(), &end);
    if (end != token.c_str() + token.size())
      return fail(cat("bad number \"", token, "\""));
    v.type = json_value::kind::number;
    pos_ += n;
    return true;
  }

  bool hex4(unsigned& cp) {
    if (pos_ + 4 > s_.size())
      return fail("truncated \\u escape");
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      char h = s_[pos_++];
      cp <<= 4;
      if (h >= '0' && h <= '9') cp |= static_cast<unsigned>(h - '0');
      else if (h >= 'a' && h <= 'f') cp |= static_cast<unsigned>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') cp |= static_cast<unsigned>(h - 'A' + 10);
      else return fail("bad \\u escape");
    }
    return true;
  }

  bool string(std::string& out) {
    ++pos_; // the opening quote
    out.clear();
    while (pos_ < s_.size()) {
      char c = s_[pos_++];
      if (c == '"')
        return true;
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size())
        break;
      char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = 0;
          if (!hex4(cp))
            return false;
          if (cp >= 0xD800 && cp < 0xDC00 && s_.compare(pos_, 2, "\\u") == 0) {
            pos_ += 2;
            unsigned low = 0;
            if (!hex4(low))
              return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, static_cast<char32_t>(cp));
          break;
        }
        default: return fail(cat("bad escape \\", e));
      }
    }
    return fail("unterminated string");
  }

  bool array(json_value& v, int depth) {
    v.type = json_value::kind::array;
    ++pos_;
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return true;
    }
    for (;;) {
      v.items.emplace_back();
      if (!value(v.items.back(), depth + 1))
        return false;
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        return true;
      }
      return fail("expected ',' or ']'");
    }
  }

  bool object(json_value& v, int depth) {
    v.type = json_value::kind::object;
    ++pos_;
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return true;
    }
    for (;;) {
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != '"')
        return fail("expected a member name");
      std::string key;
      if (!string(key))
        return false;
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != ':')
        return fail("expected ':'");
      ++pos_;
      json_value member;
      if (!value(member, depth + 1))
        return false;
      v.members[key] = std::move(member);
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        return true;
      }
      return fail("expected ',' or '}'");
    }
  }

  const std::string& s_;
  const std::string& what_;
  size_t pos_ = 0;
  std::string why_;
};

} // namespace

caf::expected<json_value> parse_json(const std::string& text, const std::string& what) {
  return parser{text, what}.document();
}

} // namespace actorps
