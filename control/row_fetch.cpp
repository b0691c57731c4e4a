// A step's row fetch (see row_fetch.hpp).
#include "control/row_fetch.hpp"

namespace actorps {

uint64_t row_fetch::begin(size_t pulls) {
  ++fetches_;
  waiting_ = pulls;
  at_ = pulls == 0 ? phase::idle : phase::pulling;
  return fetches_;
}

uint64_t row_fetch::begin_ahead(size_t pulls) {
  ++fetches_;
  waiting_ = pulls;
  at_ = pulls == 0 ? phase::ready : phase::pulling_ahead;
  return fetches_;
}

row_fetch::next row_fetch::release() {
  switch (at_) {
    case phase::ready: at_ = phase::idle; return next::compute;
    case phase::pulling_ahead: at_ = phase::pulling; return next::wait; // (its last answer computes)
    case phase::failed_ahead: at_ = phase::idle; return next::refetch;
    default: return next::wait;
  }
}

row_fetch::next row_fetch::answered(uint64_t fetch) {
  if (!current(fetch))
    return next::wait;
  if (--waiting_ > 0)
    return next::wait;
  if (at_ == phase::pulling_ahead) { // (held until the step computes)
    at_ = phase::ready;
    return next::wait;
  }
  at_ = phase::idle;
  return next::compute;
}

row_fetch::next row_fetch::failed(uint64_t fetch) {
  if (!current(fetch == 0 ? fetches_ : fetch))
    return next::wait;
  if (at_ == phase::pulling_ahead) { // (the step pulls its rows when it computes)
    at_ = phase::failed_ahead;
    return next::wait;
  }
  at_ = phase::failed;
  return next::abandon;
}

} // namespace actorps
