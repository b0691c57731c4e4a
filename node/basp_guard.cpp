// Closes a connection whose peer announces a larger payload than security.max-handshake-bytes
// before it completed CAF's BASP handshake.
//
// Why: CAF 0.17.6's basp_broker sizes its read buffer from the payload length in a 32-byte BASP
// header and reads that many bytes, before any handshake: one header claiming 0xFFFFFFF0 bytes
// made a node allocate (and zero) 4 GiB; two connections reached 5.5 GB, and under a memory
// limit the node died with bad_alloc. Nothing was logged. (Issue 11, item 1.)
//
// How: these definitions live in the executable (this file is an OBJECT library linked into each
// program, like openssl_error_queue.cpp), so the dynamic linker binds libcaf_io's own calls of
// basp::instance::handle and basp_broker::connection_cleanup (through its PLT) to them; each
// calls CAF's definition (dlsym RTLD_NEXT). After CAF parsed a header, a connection that has not
// completed a handshake and announces more than the bound gets close_connection instead of
// await_payload: the broker closes it before it sizes the buffer. A connection counts as
// handshaked once CAF accepted a handshake payload on it. Connections are keyed by their handle
// (the socket descriptor, unique in the process while open); the entry goes with CAF's cleanup.
// Limit: after the handshake a plain-TCP peer is trusted as CAF trusts it (TLS keeps strangers
// from completing one).
#include "node/basp_guard.hpp"

#include "common/log.hpp"
#include "node/next_definition.hpp"

#include <caf/io/basp/instance.hpp>
#include <caf/io/basp_broker.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <mutex>
#include <string>
#include <unordered_set>

namespace {

std::atomic<uint32_t> bound{65536};
std::atomic<uint64_t> refusals{0};
std::mutex mtx;
std::unordered_set<int64_t> handshaked; // connection handles (guarded by mtx)

// "ip:port" of the socket's peer, or the handle's number.
std::string peer_of(int64_t handle) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  char text[INET6_ADDRSTRLEN] = "?";
  if (::getpeername(static_cast<int>(handle), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return actorps::cat("connection ", handle);
  if (addr.ss_family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &a->sin_addr, text, sizeof(text));
    return actorps::cat(text, ":", ntohs(a->sin_port));
  }
  auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
  inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof(text));
  return actorps::cat("[", text, "]:", ntohs(a->sin6_port));
}

bool handshake_op(caf::io::basp::message_type op) {
  return op == caf::io::basp::message_type::server_handshake || op == caf::io::basp::message_type::client_handshake;
}

} // namespace

namespace actorps {

void set_handshake_bound(uint32_t bytes) {
  bound = bytes;
}

uint64_t handshake_refusals() {
  return refusals;
}

} // namespace actorps

caf::io::basp::connection_state caf::io::basp::instance::handle(caf::execution_unit* ctx, caf::io::new_data_msg& dm,
                                                                caf::io::basp::header& hdr, bool is_payload) {
  using fn = connection_state (*)(instance*, execution_unit*, new_data_msg&, header&, bool);
  static const auto real
    = actorps::next_definition<fn>("_ZN3caf2io4basp8instance6handleEPNS_14execution_unitERNS0_12new_data_msgERNS1_6headerEb",
                                         "basp_guard");
  const auto id = dm.handle.id();
  const auto op = hdr.operation; // (of the header whose payload this is, when is_payload)
  auto state = real(this, ctx, dm, hdr, is_payload);
  // Only two events need the set: a handshake payload accepted, and a header announcing more
  // than the bound. Every other header and payload (the hot path) passes without the lock.
  if (is_payload) {
    if (state == await_header && handshake_op(op)) {
      std::lock_guard<std::mutex> guard{mtx};
      handshaked.insert(id);
    }
    return state;
  }
  if (state != await_payload || hdr.payload_len <= bound)
    return state;
  {
    std::lock_guard<std::mutex> guard{mtx};
    if (handshaked.count(id) > 0)
      return state;
  }
  ++refusals;
  actorps::log_line("basp guard", actorps::cat("refused ", peer_of(id), ": before its handshake it announced a ",
                                               hdr.payload_len, "-byte message (security.max-handshake-bytes is ",
                                               bound.load(), "); connection closed"));
  return close_connection;
}

void caf::io::basp_broker::connection_cleanup(caf::io::connection_handle hdl, caf::sec code) {
  using fn = void (*)(basp_broker*, connection_handle, sec);
  static const auto real = actorps::next_definition<fn>(
    "_ZN3caf2io11basp_broker18connection_cleanupENS0_17connection_handleENS_3secE", "basp_guard");
  {
    std::lock_guard<std::mutex> guard{mtx};
    handshaked.erase(hdl.id());
  }
  real(this, hdl, code);
}
