// The one error enum of actorps and helpers to make and describe its errors.
// Errors are values (caf::error / caf::expected); nothing in actorps throws them across an API.
#pragma once

#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <caf/make_message.hpp>

#include <cstdint>
#include <string>

namespace actorps {

/// Error codes of every actorps component; category atom "actorps".
enum class errc : uint8_t {
  none = 0,
  invalid_config,     ///< unknown key, wrong type or bad value in a config file or command line
  file_error,         ///< a file could not be opened, read or written
  corrupt_data,       ///< a data file is malformed (magic, dimensions, counts, sizes)
  shape_mismatch,     ///< tensor dimensions do not fit the operation
  invalid_argument,   ///< any other bad argument
  device_unavailable, ///< a GPU was demanded but none is usable
  device_error,       ///< a CUDA or cuBLAS call failed
  out_of_memory,      ///< an allocation (host, device or memory cap) failed
  non_finite,         ///< NaN or Inf where finite values are required
  unknown_variable,   ///< a message names a variable the receiver does not hold
  unknown_worker,     ///< a message comes from a worker id outside the cluster
  not_initialized,    ///< a shard was used before the chief initialised it
  peer_unreachable,   ///< a node could not reach a peer before its deadline
  timeout,            ///< a wait or request passed its deadline
  protocol_error,     ///< a peer broke the protocol (wrong byte order, unexpected reply)
  unknown_scope,      ///< a message names a variable scope (train.scope) the shard does not hold
  cluster_full,       ///< an elastic join above cluster.max-workers
  wrong_cluster,      ///< a worker of another cluster (model, placement or shards) tried to register
  terminated,         ///< the node was told to stop (SIGTERM) before it could finish its work
  internal_error,     ///< an exception escaped an actor's handler (a bug: the text names it)
};

/// Returns the enumerator's name, e.g. "invalid_config".
const char* to_string(errc x);

/// Renders an error made with make_error(errc, ...) as "code: context"; other errors via CAF.
std::string describe(const caf::error& err);

/// An error's text without its code: the context of actorps's errors ("a.idx: truncated"), CAF's
/// rendering of others. For wrapping an error in another's context.
std::string context_of(const caf::error& err);

/// The actorps code of an error: its own for actorps's errors, timeout for CAF's request
/// timeout, peer_unreachable for CAF's other errors (a broken connection, a peer gone).
errc code_of(const caf::error& err);

/// A program's exit code for a run that failed with `err`: 2 for a bad configuration
/// (invalid_config, wherever it is found), 1 for any other failure; 0 for none.
int exit_code(const caf::error& err);

/// Renderer for actor_system_config::add_error_category(caf::atom("actorps"), ...).
std::string render_errc(uint8_t code, const std::string& context);

} // namespace actorps

CAF_ERROR_CODE_ENUM(actorps::errc, "actorps")
