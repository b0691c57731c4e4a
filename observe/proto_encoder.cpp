// Protocol-buffer wire encoding (little-endian fixed fields, base-128 varints).
#include "observe/proto_encoder.hpp"

namespace actorps {

static_assert(sizeof(double) == 8 && sizeof(float) == 4);

void proto_encoder::raw_varint(uint64_t value) {
  while (value >= 0x80) {
    out_.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out_.push_back(static_cast<char>(value));
}

void proto_encoder::tag(uint32_t field, uint32_t wire_type) {
  raw_varint((uint64_t{field} << 3) | wire_type);
}

proto_encoder& proto_encoder::varint(uint32_t field, uint64_t value) {
  tag(field, 0);
  raw_varint(value);
  return *this;
}

proto_encoder& proto_encoder::fixed64(uint32_t field, double value) {
  tag(field, 1);
  append_le(out_, value);
  return *this;
}

proto_encoder& proto_encoder::fixed32(uint32_t field, float value) {
  tag(field, 5);
  append_le(out_, value);
  return *this;
}

proto_encoder& proto_encoder::bytes(uint32_t field, std::string_view value) {
  tag(field, 2);
  raw_varint(value.size());
  out_.append(value.data(), value.size());
  return *this;
}

proto_encoder& proto_encoder::packed(uint32_t field, const std::vector<double>& values) {
  tag(field, 2);
  raw_varint(values.size() * sizeof(double));
  for (double v : values)
    append_le(out_, v);
  return *this;
}

} // namespace actorps
