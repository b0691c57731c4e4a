// Counting and formatting; the loss in double from the logits (log-sum-exp).
#include "tools/confusion_matrix.hpp"

#include "common/json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace actorps {

confusion_matrix::confusion_matrix(int classes)
  : classes_(classes), counts_(static_cast<size_t>(classes) * static_cast<size_t>(classes), 0) {
}

void confusion_matrix::add(const float* logits, const float* labels, int rows) {
  for (int r = 0; r < rows; ++r) {
    const float* z = logits + static_cast<size_t>(r) * classes_;
    int best = static_cast<int>(std::max_element(z, z + classes_) - z);
    double top = z[best], sum = 0.0;
    for (int c = 0; c < classes_; ++c)
      sum += std::exp(static_cast<double>(z[c]) - top);
    auto label = static_cast<int>(labels[r]);
    loss_sum_ += top + std::log(sum) - z[label];
    ++counts_[static_cast<size_t>(label) * classes_ + best];
    ++examples_;
  }
}

int64_t confusion_matrix::count(int label, int predicted) const {
  return counts_[static_cast<size_t>(label) * classes_ + predicted];
}

double confusion_matrix::loss() const {
  return examples_ > 0 ? loss_sum_ / static_cast<double>(examples_) : 0.0;
}

double confusion_matrix::accuracy() const {
  int64_t right = 0;
  for (int c = 0; c < classes_; ++c)
    right += count(c, c);
  return examples_ > 0 ? static_cast<double>(right) / static_cast<double>(examples_) : 0.0;
}

std::vector<double> confusion_matrix::class_accuracy() const {
  std::vector<double> out;
  for (int c = 0; c < classes_; ++c) {
    int64_t n = 0;
    for (int p = 0; p < classes_; ++p)
      n += count(c, p);
    out.push_back(n > 0 ? static_cast<double>(count(c, c)) / static_cast<double>(n) : -1.0);
  }
  return out;
}

std::string confusion_matrix::table(const std::vector<std::string>& names) const {
  int64_t widest = 1;
  for (auto n : counts_)
    widest = std::max(widest, n);
  const size_t w = std::max<size_t>(4, std::to_string(widest).size() + 1);
  auto right = [w](const std::string& text) { return std::string(w > text.size() ? w - text.size() : 0, ' ') + text; };
  size_t name_w = 0;
  for (int c = 0; c < classes_ && static_cast<size_t>(c) < names.size(); ++c)
    name_w = std::max(name_w, names[static_cast<size_t>(c)].size() + 1);
  auto label = [&](int c) {
    std::string n = static_cast<size_t>(c) < names.size() ? names[static_cast<size_t>(c)] : "";
    return name_w == 0 ? std::string{} : " " + n + std::string(name_w - 1 - std::min(n.size(), name_w - 1), ' ');
  };
  char buf[64];
  std::string out = "class" + std::string(name_w, ' ') + "  accuracy  | predicted:";
  for (int p = 0; p < classes_; ++p)
    out += right(std::to_string(p));
  out += "\n";
  auto acc = class_accuracy();
  for (int c = 0; c < classes_; ++c) {
    std::snprintf(buf, sizeof buf, "%5d", c);
    out += buf + label(c);
    if (acc[c] < 0)
      std::snprintf(buf, sizeof buf, "  %8s  |           ", "-");
    else
      std::snprintf(buf, sizeof buf, "  %7.2f%%  |           ", 100.0 * acc[c]);
    out += buf;
    for (int p = 0; p < classes_; ++p)
      out += right(std::to_string(count(c, p)));
    out += "\n";
  }
  return out;
}

std::string confusion_matrix::json() const {
  std::string per_class = "[";
  auto acc = class_accuracy();
  for (int c = 0; c < classes_; ++c) {
    char buf[32];
    if (acc[c] < 0)
      std::snprintf(buf, sizeof buf, "null");
    else
      std::snprintf(buf, sizeof buf, "%.6g", acc[c]);
    per_class += (c > 0 ? ", " : "") + std::string{buf};
  }
  per_class += "]";
  std::string matrix = "[";
  for (int c = 0; c < classes_; ++c) {
    std::vector<uint64_t> row;
    for (int p = 0; p < classes_; ++p)
      row.push_back(static_cast<uint64_t>(count(c, p)));
    matrix += (c > 0 ? ", " : "") + json_array(row);
  }
  matrix += "]";
  json_object out;
  out.add("examples", examples_).add("loss", loss()).add("accuracy", accuracy());
  out.add_raw("class_accuracy", per_class).add_raw("confusion", matrix);
  return out.str();
}

} // namespace actorps
