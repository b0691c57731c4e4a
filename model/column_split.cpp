// Even column slices.
#include "model/column_split.hpp"

#include "common/log.hpp"

namespace actorps {

column_range slice_columns(int units, int k, int slices) {
  int base = units / slices, extra = units % slices;
  int begin = k * base + (k < extra ? k : extra);
  return {begin, begin + base + (k < extra ? 1 : 0)};
}

std::string check_split(const mlp_spec& spec, int slices) {
  if (slices < 1)
    return cat("train.slices must be >= 1, got ", slices);
  for (int l = 0; l < spec.layer_count(); ++l)
    if (spec.layer_outputs(l) < slices)
      return cat("train.slices = ", slices, " but layer ", l, " has only ", spec.layer_outputs(l),
                 " units: every slice needs at least one unit of every layer");
  return "";
}

} // namespace actorps
