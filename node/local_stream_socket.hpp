// Same-host tensor streams (cluster.local-streams): a Unix-domain stream socket in Linux's
// abstract namespace, named at random per ps node. It leaves no file behind, and only processes
// of the same host and network namespace can reach it: a worker elsewhere fails to connect and
// takes TCP. Its send buffers are widened (a 1 MiB frame in a few wake-ups instead of ten).
#pragma once

#include <caf/expected.hpp>

#include <cstddef>
#include <string>

namespace actorps {

/// The send and receive buffer each end of a local stream asks for (the kernel may cap it at
/// net.core.wmem_max / rmem_max unless the process may force it).
constexpr int local_stream_buffer_bytes = 4 << 20;

/// A listening local socket (non-blocking, close-on-exec) and its name ("actorps-stream-" and
/// 16 random hex digits; the abstract namespace's leading NUL is not part of it).
struct local_listening {
  int fd = -1;
  std::string name;
};

/// Listens at a new random name; an error (peer_unreachable) says why.
caf::expected<local_listening> listen_local();

/// Connects to the local socket `name` (non-blocking, close-on-exec, buffers widened); an error
/// (peer_unreachable) names it: nobody listens there on this host, or another user's process
/// does (a stream that may go without TLS talks to its own user's processes only).
caf::expected<int> connect_local(const std::string& name);

/// Widens fd's send and receive buffers to local_stream_buffer_bytes (forced where the process
/// may, else up to the system's cap).
void widen_local_buffers(int fd);

/// How an accepted local connection's peer is named in log lines: "this host (pid N)".
std::string local_peer_of(int fd);

/// The process at the other end of local socket fd, as the kernel gave it (0: unknown).
int local_pid_of(int fd);

/// Whether the process at the other end of local socket fd (the listener, for a connected
/// socket; the connecting process, for an accepted one) runs as this process's effective user.
bool same_user(int fd);

/// The send buffer fd has (bytes, as the kernel reports it).
int send_buffer_of(int fd);

} // namespace actorps
