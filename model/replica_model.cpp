// The defaults of a replica model: no embedding table.
#include "model/replica_model.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

namespace actorps {

caf::error replica_model::download_table_gradient(size_t var, std::vector<size_t>&, std::vector<float>&) {
  return caf::make_error(errc::invalid_argument, cat("variable ", var, " is not an embedding table"));
}

} // namespace actorps
