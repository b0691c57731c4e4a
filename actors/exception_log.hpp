// What an actor of the project does with an exception that escapes one of its handlers: it ends
// with internal_error naming the exception and the actor (its tag), logged as its last line.
// CAF's default ends it with a bare runtime_error and prints to standard output only, so a node
// whose chief died so said no more than "stopped without a result".
#pragma once

#include "common/errc.hpp"
#include "common/log.hpp"

#include <caf/error.hpp>
#include <caf/scheduled_actor.hpp>

#include <exception>
#include <string>

namespace actorps {

/// The text of an exception: what() of a std::exception, "an unknown exception" otherwise.
inline std::string exception_text(const std::exception_ptr& x) {
  try {
    std::rethrow_exception(x);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an unknown exception";
  }
}

/// Installs the handler on self; tag names the actor in the log line and the error.
inline void log_exceptions(caf::scheduled_actor* self, std::string tag) {
  self->set_exception_handler([tag = std::move(tag)](caf::scheduled_actor*, std::exception_ptr& x) -> caf::error {
    auto err = caf::make_error(errc::internal_error, cat(tag, ": an exception ended it: ", exception_text(x)));
    log_line(tag, describe(err));
    return err;
  });
}

} // namespace actorps
