// A step's row fetch (see row_fetch.hpp).
#include "control/row_fetch.hpp"

namespace actorps {

uint64_t row_fetch::begin(size_t pulls) {
  ++fetches_;
  waiting_ = pulls;
  at_ = pulls == 0 ? phase::idle : phase::pulling;
  return fetches_;
}

row_fetch::next row_fetch::answered(uint64_t fetch) {
  if (!current(fetch))
    return next::wait;
  if (--waiting_ > 0)
    return next::wait;
  at_ = phase::idle;
  return next::compute;
}

row_fetch::next row_fetch::failed(uint64_t fetch) {
  if (at_ != phase::pulling || (fetch != 0 && fetch != fetches_))
    return next::wait;
  at_ = phase::failed;
  return next::abandon;
}

} // namespace actorps
