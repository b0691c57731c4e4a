// Process-wide log lines on stderr: "[12.345s] tag: text". Thread-safe, no CAF needed.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace actorps {

/// Writes one line "[seconds since start] tag: text" to stderr (whole lines, thread-safe).
void log_line(const std::string& tag, const std::string& text);

/// Returns seconds elapsed since the process first used the log or the clock.
double uptime_seconds();

/// Streams its arguments into one string: cat("step ", 5) == "step 5".
template <class... Ts>
std::string cat(const Ts&... xs) {
  std::ostringstream out;
  (out << ... << xs);
  return out.str();
}

/// Returns whether text ends with tail.
bool ends_with(const std::string& text, const std::string& tail);

/// Returns parts joined by sep: join({"a", "b"}, ", ") == "a, b".
std::string join(const std::vector<std::string>& parts, const std::string& sep);

} // namespace actorps
