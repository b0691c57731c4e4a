// Event and Summary encoding. Field numbers: Event {wall_time 1, step 2, file_version 3,
// summary 5}; Summary {value 1}; Summary.Value {tag 1, simple_value 2, histo 5, tensor 8,
// metadata 9}; HistogramProto {min 1, max 2, num 3, sum 4, sum_squares 5, bucket_limit 6,
// bucket 7}; SummaryMetadata {plugin_data 1 {plugin_name 1}}; TensorProto {dtype 1, string_val 8}.
#include "observe/summary_event.hpp"

#include "observe/proto_encoder.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

namespace actorps {

namespace {

std::string event(double wall_time, int64_t step, const proto_encoder& summary) {
  proto_encoder e;
  e.fixed64(1, wall_time).varint(2, static_cast<uint64_t>(step)).message(5, summary);
  return e.str();
}

proto_encoder summary_of(const proto_encoder& value) {
  proto_encoder s;
  s.message(1, value);
  return s;
}

} // namespace

double wall_time_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string file_version_event(double wall_time) {
  proto_encoder e;
  e.fixed64(1, wall_time).bytes(3, "brain.Event:2");
  return e.str();
}

std::string scalars_event(double wall_time, int64_t step, const std::vector<std::pair<std::string, double>>& values) {
  proto_encoder s;
  for (auto& [tag, v] : values) {
    proto_encoder value;
    value.bytes(1, tag).fixed32(2, static_cast<float>(v));
    s.message(1, value);
  }
  return event(wall_time, step, s);
}

std::string histogram_event(double wall_time, int64_t step, const std::string& tag, const histogram_data& h) {
  double num = 0, sum = 0, squares = 0;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (size_t i = 0; i < h.bucket.size() && i < h.bucket_limit.size(); ++i) {
    if (h.bucket[i] <= 0)
      continue;
    const double x = h.bucket_limit[i];
    num += h.bucket[i];
    sum += h.bucket[i] * x;
    squares += h.bucket[i] * x * x;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  if (num == 0)
    lo = hi = 0;
  proto_encoder histo;
  histo.fixed64(1, lo).fixed64(2, hi).fixed64(3, num).fixed64(4, sum).fixed64(5, squares)
    .packed(6, h.bucket_limit).packed(7, h.bucket);
  proto_encoder value;
  value.bytes(1, tag).message(5, histo);
  return event(wall_time, step, summary_of(value));
}

std::string text_event(double wall_time, int64_t step, const std::string& tag, const std::string& text) {
  proto_encoder plugin, metadata, tensor, value;
  plugin.bytes(1, "text");
  metadata.message(1, plugin);
  tensor.varint(1, 7 /* DT_STRING */).bytes(2, "" /* a scalar: no dimensions */).bytes(8, text);
  value.bytes(1, tag).message(8, tensor).message(9, metadata);
  return event(wall_time, step, summary_of(value));
}

} // namespace actorps
