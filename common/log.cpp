// Implements the log line writer.
#include "common/log.hpp"

#include <chrono>
#include <cstdio>
#include <mutex>

namespace actorps {

namespace {
const auto process_start = std::chrono::steady_clock::now();
std::mutex log_mutex;
} // namespace

double uptime_seconds() {
  auto dt = std::chrono::steady_clock::now() - process_start;
  return std::chrono::duration<double>(dt).count();
}

void log_line(const std::string& tag, const std::string& text) {
  std::lock_guard<std::mutex> guard{log_mutex};
  std::fprintf(stderr, "[%9.3fs] %s: %s\n", uptime_seconds(), tag.c_str(), text.c_str());
  std::fflush(stderr);
}

bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i)
    out += (i == 0 ? "" : sep) + parts[i];
  return out;
}

} // namespace actorps
