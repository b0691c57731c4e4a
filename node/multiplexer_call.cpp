// The registry of stream handlers, per multiplexer (see multiplexer_call.hpp).
#include "node/multiplexer_call.hpp"

#include <caf/io/middleman.hpp>

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace actorps {

namespace {

struct tracked {
  std::weak_ptr<void> owner;
  std::function<void()> close;
};

std::mutex registry_mtx;
std::map<const void*, std::vector<tracked>> registry; // by multiplexer

} // namespace

void track_stream_handler(caf::io::network::default_multiplexer& mpx, std::weak_ptr<void> owner,
                          std::function<void()> close) {
  std::lock_guard<std::mutex> guard{registry_mtx};
  auto& list = registry[&mpx];
  list.erase(std::remove_if(list.begin(), list.end(), [](const tracked& t) { return t.owner.expired(); }), list.end());
  list.push_back({std::move(owner), std::move(close)});
}

void close_stream_handlers(caf::actor_system& sys) {
  std::vector<tracked> list;
  {
    std::lock_guard<std::mutex> guard{registry_mtx};
    auto it = registry.find(&sys.middleman().backend());
    if (it == registry.end())
      return;
    list = std::move(it->second);
    registry.erase(it);
  }
  for (auto& t : list)
    if (auto alive = t.owner.lock())
      t.close();
}

} // namespace actorps
