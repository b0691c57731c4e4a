// Reading from every shard at once, for the chief: the whole model, the counters, the snapshots.
// Each fans the requests in (control/fan_in.hpp) and calls `done` once with every answer, or
// `failed` once with the first failure named. Header-only: included by actors/chief.cpp alone.
#pragma once

#include "control/fan_in.hpp"
#include "actors/parameter_shard.hpp"
#include "control/slicing.hpp"
#include "model/replica_model.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace actorps {

using failed_fn = std::function<void(std::string)>;

/// Asks every shard `(Ts...)` and fans the answers (of type T, indexed by shard) into done.
template <class T, class Self, class... Ts>
void ask_every_shard(Self* self, const std::vector<parameter_shard_actor>& shards, std::chrono::milliseconds timeout,
                     const std::string& what, std::function<void(std::vector<T>&)> done, failed_fn failed,
                     Ts... xs) {
  auto fan = fan_in<T>::make(shards.size(), std::move(done), std::move(failed));
  for (size_t s = 0; s < shards.size(); ++s)
    self->request(shards[s], timeout, xs...)
      .then([fan, s](T& x) { fan->put(s, std::move(x)); },
            [fan, s, what](caf::error& err) { fan->fail(cat(what, " from shard ", s, " failed: ", describe(err))); });
}

/// Pulls every variable of the plan (as chief_worker_id) into `model` (each reply's values
/// uploaded as they come: no second copy of the model, which may hold a table of gigabytes) and
/// calls done once all are in.
template <class Self>
void pull_every_variable(Self* self, const std::vector<parameter_shard_actor>& shards, const placement_plan& plan,
                         uint32_t max_floats, std::chrono::milliseconds timeout, replica_model& model,
                         std::function<void()> done, failed_fn failed) {
  std::vector<std::pair<uint32_t, pull_request>> requests;
  for (uint32_t s = 0; s < plan.shards; ++s)
    for (auto& req : pull_requests_for(held_ranges(plan, s), chief_worker_id, max_floats)) {
      req.scope = plan.scope;
      requests.emplace_back(s, std::move(req));
    }
  auto fan = fan_in<bool>::make(
    requests.size(), [done](std::vector<bool>&) { done(); }, std::move(failed));
  for (size_t i = 0; i < requests.size(); ++i) {
    auto s = requests[i].first;
    self->request(shards[s], timeout, pull_atom_v, std::move(requests[i].second))
      .then(
        [fan, &model, i, s](const pull_reply& reply) {
          for (auto& slice : reply.slices) {
            caf::error err = slice.by_rows() ? caf::make_error(errc::protocol_error, "rows for a pull of ranges")
                                             : model.upload_parameter(slice.variable, slice.offset,
                                                                      slice.data.values.data(), slice.data.values.size());
            if (err)
              return fan->fail(cat("pulling the model from shard ", s, " failed: ", describe(err)));
          }
          fan->put(i, true);
        },
        [fan, s](caf::error& err) { fan->fail(cat("pulling the model from shard ", s, " failed: ", describe(err))); });
  }
}

} // namespace actorps
