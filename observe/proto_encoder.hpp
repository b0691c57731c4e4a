// The few protocol-buffer wire types TensorBoard's Event and Summary messages use: varints,
// 64- and 32-bit fixed fields, length-delimited fields and packed doubles.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace actorps {

/// Appends value's bytes, little-endian (protocol buffers' fixed fields, TFRecord's lengths and CRCs).
template <class T>
void append_le(std::string& out, T value) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "a big-endian host would need a byte swap here");
  char b[sizeof(T)];
  std::memcpy(b, &value, sizeof(T));
  out.append(b, sizeof(T));
}

class proto_encoder {
public:
  proto_encoder& varint(uint32_t field, uint64_t value);
  proto_encoder& fixed64(uint32_t field, double value);
  proto_encoder& fixed32(uint32_t field, float value);
  proto_encoder& bytes(uint32_t field, std::string_view value);
  proto_encoder& message(uint32_t field, const proto_encoder& inner) { return bytes(field, inner.out_); }
  proto_encoder& packed(uint32_t field, const std::vector<double>& values);

  const std::string& str() const { return out_; }

private:
  void tag(uint32_t field, uint32_t wire_type);
  void raw_varint(uint64_t value);
  std::string out_;
};

} // namespace actorps
