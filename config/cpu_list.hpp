// node.cpus: the CPUs a node's process runs on, written as Linux writes CPU lists ("0", "0-3",
// "0,2,4-5": taskset -c, /sys/devices/system/cpu/online). Plain parsing and checking; the
// pinning itself is node/cpu_affinity.
#pragma once

#include <caf/expected.hpp>

#include <string>
#include <vector>

namespace actorps {

/// The most CPU numbers a list may name (the kernel's cpu_set_t holds this many).
inline constexpr int max_cpu_number = 1023;

/// The CPUs of `text`, ascending and each once ("" : none, i.e. not pinned). Fails with
/// invalid_config naming `key` for anything else: a word, a range whose end is below its start,
/// a number above max_cpu_number, an empty item ("0,,1").
caf::expected<std::vector<int>> parse_cpu_list(const std::string& text, const std::string& key = "node.cpus");

/// Writes CPUs as a list in the same form, ranges joined ({0, 1, 2, 5} -> "0-2,5").
std::string cpu_list_text(const std::vector<int>& cpus);

/// Fails with invalid_config naming `key` when `cpus` names one that `allowed` (the process's own
/// set: sched_getaffinity) lacks, saying which are allowed.
caf::error check_cpus_allowed(const std::vector<int>& cpus, const std::vector<int>& allowed,
                              const std::string& key = "node.cpus");

} // namespace actorps
