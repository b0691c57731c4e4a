// TensorFlow's Event records (tensorflow/core/util/event.proto, summary.proto, with their field
// numbers): the file-version record, scalars, a histogram and a text summary, each as the
// serialised Event that one TFRecord carries.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace actorps {

/// Seconds since the epoch, an Event's wall_time.
double wall_time_now();

/// "brain.Event:2": the first record of every event file.
std::string file_version_event(double wall_time);

/// Scalars (tag, value) at `step`, as simple_value summaries.
std::string scalars_event(double wall_time, int64_t step, const std::vector<std::pair<std::string, double>>& values);

/// A histogram of counts per bucket: bucket i holds values up to bucket_limit[i] (TF's
/// HistogramProto; min, max, num, sum and sum of squares are computed from the buckets, each
/// bucket's values counted at its upper limit).
struct histogram_data {
  std::vector<double> bucket_limit;
  std::vector<double> bucket;
};
std::string histogram_event(double wall_time, int64_t step, const std::string& tag, const histogram_data& h);

/// A text summary (the text plugin: a scalar DT_STRING tensor, rendered as Markdown).
std::string text_event(double wall_time, int64_t step, const std::string& tag, const std::string& text);

} // namespace actorps
