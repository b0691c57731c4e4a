// Chooses the compute backend for a worker: compute.device = auto | cpu | gpu.
#pragma once

#include "compute/backend.hpp"

#include <caf/expected.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace actorps {

/// Where a worker computes.
enum class device_mode { auto_select, cpu, gpu };

/// Returns "auto", "cpu" or "gpu".
const char* to_string(device_mode m);

/// Parses "auto", "cpu" or "gpu"; nullopt for anything else.
std::optional<device_mode> parse_device_mode(const std::string& name);

/// One device of compute.devices: "cpu:N" or "gpu:N", or TensorFlow's spelling
/// ("/device:GPU:1", "/gpu:1", "/job:worker/task:0/device:CPU:0"); case does not matter.
struct device_name {
  device_mode kind = device_mode::cpu; ///< cpu or gpu
  int index = 0;
};

/// Parses a device name; an error (invalid_config) quotes it and says what is expected.
caf::expected<device_name> parse_device_name(const std::string& text);

/// TensorFlow's full name of a device of task `task` of `job`: "/job:worker/task:0/device:GPU:1".
std::string tf_device_name(const std::string& job, uint32_t task, const device_name& d);

/// compute.gpu-memory: how a GPU backend takes device memory (TensorFlow's allow_growth and
/// per_process_gpu_memory_fraction).
struct gpu_memory_policy {
  enum class mode { grow, fraction };
  mode kind = mode::grow;  ///< grow: each buffer allocated when it is needed, up to the device's memory
  double fraction = 1.0;   ///< fraction: this share of the device's memory reserved at start, in (0, 1]
};

/// Parses "grow" or "fraction:F" (0 < F <= 1); an error (invalid_config) names compute.gpu-memory.
caf::expected<gpu_memory_policy> parse_gpu_memory(const std::string& text);

/// "grow" or "fraction:F".
std::string to_string(const gpu_memory_policy& m);

/// The compute.* options.
struct device_options {
  device_mode mode = device_mode::auto_select;
  int gpu_index = 0;               ///< CUDA device ordinal
  gpu_memory_policy gpu_memory;    ///< compute.gpu-memory
  bool pinned_copies = true;       ///< compute.pinned-copies: host copies through pinned staging on a copy stream
  bool soft_placement = true;      ///< an op without a kernel on the device runs on the CPU (else an error)
  int cpu_threads = 1;             ///< OpenBLAS threads of the CPU backend
  std::vector<device_name> devices; ///< compute.devices: a tower per device (empty: one device as above)
};

/// Returns the number of usable CUDA devices, or an error saying why there is none
/// (built without CUDA, no driver, no device). Never aborts.
caf::expected<int> cuda_device_count();

/// Creates the CUDA backend on opts.gpu_index, taking memory as opts.gpu_memory says (fraction:
/// the share reserved at once, or out_of_memory naming compute.gpu-memory). Fails with
/// device_unavailable, device_error or out_of_memory.
caf::expected<std::unique_ptr<backend>> make_cuda_backend(const device_options& opts);

/// Creates the backend opts ask for. auto: the GPU if usable, else one log line (tag `who`)
/// and the CPU backend (the line says that compute.gpu-memory = fraction:F does not apply to
/// it); gpu: the GPU or a device_unavailable error; cpu: the CPU backend. A backend without a
/// kernel for some op comes wrapped in soft placement (compute/soft_placement.hpp), or is refused
/// naming the op when opts.soft_placement is false.
caf::expected<std::unique_ptr<backend>> select_backend(const device_options& opts,
                                                       const std::string& who);

} // namespace actorps
