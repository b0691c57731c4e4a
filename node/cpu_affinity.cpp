#include "node/cpu_affinity.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "config/cpu_list.hpp"

#include <sched.h>

#include <cerrno>
#include <cstring>

namespace actorps {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof set, &set) != 0)
    return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set))
      out.push_back(c);
  return out;
}

caf::error pin_to_cpus(const std::vector<int>& cpus) {
  if (cpus.empty())
    return caf::none;
  if (auto err = check_cpus_allowed(cpus, allowed_cpus()))
    return err;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus)
    CPU_SET(c, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    return caf::make_error(errc::device_error, cat("node.cpus = \"", cpu_list_text(cpus), "\": sched_setaffinity: ",
                                                   std::strerror(errno)));
  return caf::none;
}

} // namespace actorps
