#include "config/cpu_list.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <algorithm>
#include <cctype>

namespace actorps {

namespace {

// A CPU number of a list: digits only, at most max_cpu_number.
bool parse_number(const std::string& s, int& out) {
  if (s.empty() || s.size() > 4 || !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }))
    return false;
  out = std::stoi(s);
  return out <= max_cpu_number;
}

} // namespace

caf::expected<std::vector<int>> parse_cpu_list(const std::string& text, const std::string& key) {
  std::vector<int> out;
  if (text.empty())
    return out;
  auto bad = [&](const std::string& item) {
    return caf::make_error(errc::invalid_config,
                           cat(key, " must be a CPU list such as \"0\", \"0-3\" or \"0,2,4-5\" (numbers up to ",
                               max_cpu_number, "), got \"", text, "\" (\"", item, "\")"));
  };
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const size_t dash = item.find('-');
    int first = 0, last = 0;
    if (dash == std::string::npos) {
      if (!parse_number(item, first))
        return bad(item);
      last = first;
    } else if (!parse_number(item.substr(0, dash), first) || !parse_number(item.substr(dash + 1), last) || last < first) {
      return bad(item);
    }
    for (int c = first; c <= last; ++c)
      out.push_back(c);
    start = comma + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string cpu_list_text(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1)
      ++j;
    out += cat(out.empty() ? "" : ",", cpus[i], j > i ? cat("-", cpus[j]) : std::string{});
    i = j + 1;
  }
  return out;
}

caf::error check_cpus_allowed(const std::vector<int>& cpus, const std::vector<int>& allowed, const std::string& key) {
  for (int c : cpus)
    if (!std::binary_search(allowed.begin(), allowed.end(), c))
      return caf::make_error(errc::invalid_config, cat(key, " = \"", cpu_list_text(cpus), "\" names CPU ", c,
                                                       ", which this process may not run on (allowed: ",
                                                       cpu_list_text(allowed), ")"));
  return caf::none;
}

} // namespace actorps
