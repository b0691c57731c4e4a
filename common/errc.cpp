// Names and renders actorps errors.
#include "common/errc.hpp"

#include <caf/deep_to_string.hpp>
#include <caf/message.hpp>
#include <caf/sec.hpp>

namespace actorps {

const char* to_string(errc x) {
  switch (x) {
    case errc::none: return "none";
    case errc::invalid_config: return "invalid_config";
    case errc::file_error: return "file_error";
    case errc::corrupt_data: return "corrupt_data";
    case errc::shape_mismatch: return "shape_mismatch";
    case errc::invalid_argument: return "invalid_argument";
    case errc::device_unavailable: return "device_unavailable";
    case errc::device_error: return "device_error";
    case errc::out_of_memory: return "out_of_memory";
    case errc::non_finite: return "non_finite";
    case errc::unknown_variable: return "unknown_variable";
    case errc::unknown_worker: return "unknown_worker";
    case errc::not_initialized: return "not_initialized";
    case errc::peer_unreachable: return "peer_unreachable";
    case errc::timeout: return "timeout";
    case errc::protocol_error: return "protocol_error";
    case errc::unknown_scope: return "unknown_scope";
    case errc::cluster_full: return "cluster_full";
    case errc::wrong_cluster: return "wrong_cluster";
    case errc::terminated: return "terminated";
    case errc::internal_error: return "internal_error";
  }
  return "unknown";
}

namespace {

// Joins the string elements of a context message; other elements are rendered by CAF.
std::string context_text(const caf::message& msg) {
  std::string out;
  for (size_t i = 0; i < msg.size(); ++i) {
    if (!out.empty())
      out += ' ';
    if (msg.match_element<std::string>(i))
      out += msg.get_as<std::string>(i);
    else
      out += msg.cvals()->stringify(i);
  }
  return out;
}

} // namespace

std::string render_errc(uint8_t code, const std::string& context) {
  std::string out = to_string(static_cast<errc>(code));
  if (!context.empty())
    out += ": " + context;
  return out;
}

std::string describe(const caf::error& err) {
  if (!err)
    return "no error";
  if (err.category() == caf::atom("actorps"))
    return render_errc(err.code(), context_text(err.context()));
  return caf::to_string(err);
}

std::string context_of(const caf::error& err) {
  if (err.category() == caf::atom("actorps"))
    return context_text(err.context());
  return caf::to_string(err);
}

int exit_code(const caf::error& err) {
  if (!err)
    return 0;
  return code_of(err) == errc::invalid_config ? 2 : 1;
}

errc code_of(const caf::error& err) {
  if (err.category() == caf::atom("actorps"))
    return static_cast<errc>(err.code());
  return err == caf::sec::request_timeout ? errc::timeout : errc::peer_unreachable;
}

} // namespace actorps
