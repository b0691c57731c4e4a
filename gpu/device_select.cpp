// Backend selection with CPU fallback.
#include "gpu/device_select.hpp"

#include "common/enum_names.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "compute/blas_kernels.hpp"
#include "compute/cpu_backend.hpp"
#include "compute/soft_placement.hpp"

#include <cctype>
#include <cstdlib>

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

caf::expected<device_name> parse_device_name(const std::string& text) {
  std::string t;
  for (char c : text)
    t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto at = t.rfind("/device:"); // (TF's full name: the device part)
  if (at != std::string::npos)
    t = t.substr(at + 8);
  else if (!t.empty() && t.front() == '/')
    t = t.substr(1);
  const auto colon = t.find(':');
  auto bad = [&] {
    return caf::make_error(errc::invalid_config, cat("compute.devices: \"", text, "\" is not a device; write cpu:N or "
                                                     "gpu:N (or TensorFlow's /device:GPU:N)"));
  };
  if (colon == std::string::npos || colon + 1 >= t.size())
    return bad();
  const std::string kind = t.substr(0, colon), number = t.substr(colon + 1);
  if ((kind != "cpu" && kind != "gpu") || number.find_first_not_of("0123456789") != std::string::npos || number.size() > 4)
    return bad();
  return device_name{kind == "cpu" ? device_mode::cpu : device_mode::gpu, std::stoi(number)};
}

caf::expected<gpu_memory_policy> parse_gpu_memory(const std::string& text) {
  if (text == "grow")
    return gpu_memory_policy{};
  const std::string prefix = "fraction:";
  if (text.compare(0, prefix.size(), prefix) == 0) {
    const std::string number = text.substr(prefix.size());
    char* end = nullptr;
    const double f = number.empty() ? 0.0 : std::strtod(number.c_str(), &end);
    if (end != nullptr && *end == '\0' && f > 0.0 && f <= 1.0)
      return gpu_memory_policy{gpu_memory_policy::mode::fraction, f};
  }
  return caf::make_error(errc::invalid_config, cat("compute.gpu-memory must be grow or fraction:F with F in (0, 1] "
                                                   "(e.g. fraction:0.5), got \"", text, "\""));
}

std::string to_string(const gpu_memory_policy& m) {
  return m.kind == gpu_memory_policy::mode::grow ? std::string{"grow"} : cat("fraction:", m.fraction);
}

std::string tf_device_name(const std::string& job, uint32_t task, const device_name& d) {
  return cat("/job:", job, "/task:", task, "/device:", d.kind == device_mode::gpu ? "GPU" : "CPU", ":", d.index);
}

caf::expected<std::unique_ptr<backend>> select_backend(const device_options& opts,
                                                       const std::string& who) {
  if (opts.cpu_threads < 1)
    return caf::make_error(errc::invalid_config,
                           cat("compute.threads must be >= 1, got ", opts.cpu_threads));
  if (auto note = take_blas_note(); !note.empty()) // (once per process, in its log)
    log_line(who, note);
  auto placed = [&](std::unique_ptr<backend> be) { return place_softly(std::move(be), opts.soft_placement, opts.cpu_threads, who); };
  if (opts.mode == device_mode::cpu)
    return placed(make_cpu_backend(opts.cpu_threads));
  auto gpu = make_cuda_backend(opts);
  if (gpu)
    return placed(std::move(*gpu));
  if (opts.mode == device_mode::gpu)
    return caf::make_error(errc::device_unavailable,
                           cat("compute.device = gpu but ", describe(gpu.error())));
  auto cpu = make_cpu_backend(opts.cpu_threads);
  const bool reserved = opts.gpu_memory.kind == gpu_memory_policy::mode::fraction;
  log_line(who, cat("no usable GPU (", describe(gpu.error()), "); using ", cpu->name(),
                    reserved ? cat("; compute.gpu-memory = ", to_string(opts.gpu_memory), " applies to GPUs only") : ""));
  return placed(std::move(cpu));
}

} // namespace actorps
