// The tensor streams a ps node accepted, between the network's thread and the actors: the
// connection, where its notes go (the gateway until its first frame named a session, then that
// session), and the 8 bytes of that first frame. Shared by stream_gateway and stream_session;
// every call may come from any thread. Header-only: included by their .cpp files alone.
#pragma once

#include "control/stream_connection.hpp"
#include "control/stream_transfer.hpp"
#include "messages/type_ids.hpp"

#include <caf/actor.hpp>
#include <caf/send.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace actorps {

class stream_links {
public:
  struct claimed {
    std::shared_ptr<stream_connection> conn;
    std::string peer;
    int pid = 0; ///< the peer's process on the local socket (0: over TCP, or unknown)
  };

  /// A connection arrived (from process `pid` of this host on the local socket; 0: over TCP):
  /// opens its stream with notes to `owner` and announces its first frame. Returns its number
  /// (0: the stream could not be opened).
  uint64_t add(const stream_opener& open, std::string peer, caf::actor owner, int pid = 0) {
    auto entry = std::make_shared<link>();
    entry->peer = std::move(peer);
    entry->pid = pid;
    entry->target = std::move(owner);
    uint64_t id = 0;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      id = ++last_;
    }
    std::weak_ptr<link> weak = entry;
    entry->conn = open([weak, id](stream_note n) {
      auto e = weak.lock();
      if (!e)
        return;
      caf::actor to;
      {
        std::lock_guard<std::mutex> guard{e->mtx};
        to = e->target;
      }
      n.link = id;
      caf::anon_send(to, stream_atom_v, std::move(n));
    });
    if (!entry->conn)
      return 0;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      links_[id] = entry;
    }
    entry->conn->announce(stream_hello_transfer, {{reinterpret_cast<uint8_t*>(&entry->token), sizeof(uint64_t)}});
    caf::anon_send(entry->target, stream_atom_v, stream_note::accepted_link(id));
    return id;
  }

  /// The token the first frame of link `id` carried (0: none).
  uint64_t token(uint64_t id) {
    auto e = find(id);
    return e ? e->token : 0;
  }

  /// Who link `id` comes from ("": not in the table).
  std::string peer(uint64_t id) {
    auto e = find(id);
    return e ? e->peer : std::string{};
  }

  /// Hands link `id` to `owner`: its notes go there from now on; it leaves the table.
  claimed claim(uint64_t id, caf::actor owner) {
    auto e = find(id);
    if (!e)
      return {};
    {
      std::lock_guard<std::mutex> guard{e->mtx};
      e->target = std::move(owner);
    }
    std::lock_guard<std::mutex> guard{mtx_};
    links_.erase(id);
    held_[id] = e; // (the note callback holds it weakly: someone must keep it)
    return {e->conn, e->peer, e->pid};
  }

  /// Forgets a claimed link (its owner is done with it).
  void release(uint64_t id) {
    std::lock_guard<std::mutex> guard{mtx_};
    held_.erase(id);
  }

  /// Closes and forgets link `id` (not claimed).
  void drop(uint64_t id) {
    auto e = find(id);
    if (e)
      e->conn->close();
    std::lock_guard<std::mutex> guard{mtx_};
    links_.erase(id);
  }

  /// Closes every link not claimed.
  void close_all() {
    std::map<uint64_t, std::shared_ptr<link>> all;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      all.swap(links_);
    }
    for (auto& [id, e] : all)
      e->conn->close();
  }

private:
  struct link {
    std::mutex mtx; // guards target
    caf::actor target;
    std::shared_ptr<stream_connection> conn;
    std::string peer;
    int pid = 0;
    uint64_t token = 0;
  };

  std::shared_ptr<link> find(uint64_t id) {
    std::lock_guard<std::mutex> guard{mtx_};
    auto it = links_.find(id);
    return it == links_.end() ? nullptr : it->second;
  }

  std::mutex mtx_;
  uint64_t last_ = 0;
  std::map<uint64_t, std::shared_ptr<link>> links_;
  std::map<uint64_t, std::shared_ptr<link>> held_;
};

} // namespace actorps
