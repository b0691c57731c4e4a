// Backend selection with CPU fallback.
#include "gpu/device_select.hpp"

#include "common/enum_names.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "compute/cpu_backend.hpp"

namespace actorps {

const char* to_string(device_mode m) {
  switch (m) {
    case device_mode::auto_select: return "auto";
    case device_mode::cpu: return "cpu";
    case device_mode::gpu: return "gpu";
  }
  return "unknown";
}

std::optional<device_mode> parse_device_mode(const std::string& name) {
  constexpr device_mode all[] = {device_mode::auto_select, device_mode::cpu, device_mode::gpu};
  return parse_by_name(name, all);
}

caf::expected<std::unique_ptr<backend>> select_backend(const device_options& opts,
                                                       const std::string& who) {
  if (opts.cpu_threads < 1)
    return caf::make_error(errc::invalid_config,
                           cat("compute.threads must be >= 1, got ", opts.cpu_threads));
  if (opts.mode == device_mode::cpu)
    return make_cpu_backend(opts.cpu_threads);
  auto gpu = make_cuda_backend(opts);
  if (gpu)
    return std::move(*gpu);
  if (opts.mode == device_mode::gpu)
    return caf::make_error(errc::device_unavailable,
                           cat("compute.device = gpu but ", describe(gpu.error())));
  auto cpu = make_cpu_backend(opts.cpu_threads);
  log_line(who, cat("no usable GPU (", describe(gpu.error()), "); using ", cpu->name()));
  return cpu;
}

} // namespace actorps
