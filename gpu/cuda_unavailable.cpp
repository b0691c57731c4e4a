// The CUDA entry points of a build without the CUDA backend (-DACTORPS_CUDA=OFF or no nvcc).
#include "common/errc.hpp"
#include "gpu/device_select.hpp"

namespace actorps {

caf::expected<int> cuda_device_count() {
  return caf::make_error(errc::device_unavailable, "actorps was built without the CUDA backend");
}

caf::expected<std::unique_ptr<backend>> make_cuda_backend(const device_options&) {
  return cuda_device_count().error();
}

} // namespace actorps
