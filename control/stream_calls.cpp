// CAF's binary serializer without an actor system: none of these types holds an actor handle
// or a type-erased message (a refusal carries the error's text, not its context).
#include "control/stream_calls.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/make_message.hpp>
#include <caf/sec.hpp>

#include <limits>

namespace actorps {

std::string call_name(uint32_t call) {
  switch (static_cast<stream_call>(call)) {
    case stream_call::pull: return "pull";
    case stream_call::push: return "push";
    case stream_call::pull_reply: return "pull reply";
    case stream_call::push_reply: return "push reply";
    case stream_call::refusal: return "refusal";
  }
  return cat("message kind ", call);
}

template <class T>
caf::expected<std::vector<char>> encode_call(const T& x) {
  std::vector<char> out;
  caf::binary_serializer sink{nullptr, out};
  if (auto err = sink(const_cast<T&>(x)))
    return err;
  if (out.size() > std::numeric_limits<uint32_t>::max())
    return caf::make_error(errc::invalid_argument, cat("a message of ", out.size(), " bytes, more than a frame carries"));
  return out;
}

template <class T>
caf::expected<T> decode_call(const std::vector<char>& bytes, const std::string& peer, uint64_t transfer) {
  T x;
  caf::binary_deserializer source{nullptr, bytes};
  auto err = source(x);
  if (!err && source.remaining() != 0)
    err = caf::make_error(errc::protocol_error, cat(source.remaining(), " bytes after it"));
  if (err)
    return caf::make_error(errc::protocol_error,
                           cat("tensor stream from ", peer, ": the message of transfer ", transfer, " is not a ",
                               call_name(static_cast<uint32_t>(call_of(static_cast<const T*>(nullptr)))), ": ", describe(err)));
  return x;
}

#define ACTORPS_STREAM_CALL(T)                                                                                     \
  template caf::expected<std::vector<char>> encode_call<T>(const T&);                                              \
  template caf::expected<T> decode_call<T>(const std::vector<char>&, const std::string&, uint64_t);

ACTORPS_STREAM_CALL(stream_pull)
ACTORPS_STREAM_CALL(stream_push)
ACTORPS_STREAM_CALL(stream_pull_reply)
ACTORPS_STREAM_CALL(stream_push_reply)
ACTORPS_STREAM_CALL(stream_refusal)

#undef ACTORPS_STREAM_CALL

stream_refusal refusal_of(const caf::error& err) {
  const bool ours = err.category() == caf::atom("actorps");
  return stream_refusal{ours, err.code(), ours ? context_of(err) : describe(err)};
}

caf::error error_of(const stream_refusal& r) {
  if (r.actorps)
    return caf::make_error(static_cast<errc>(r.code), r.text);
  return caf::error{r.code, caf::atom("system"), caf::make_message(r.text)};
}

} // namespace actorps
