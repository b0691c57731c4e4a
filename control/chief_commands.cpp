// The meaning of run_control's commands (see chief_commands.hpp).
#include "control/chief_commands.hpp"

namespace actorps {

void carry_out(const run_commands& cmds, const run_control& ctl, chief_command_host& host, in_graph_driver* in_graph) {
  using kind = run_command::kind;
  for (auto& c : cmds) {
    if (host.ended())
      return;
    switch (c.what) {
      case kind::log: host.log(c); break;
      case kind::membership: host.membership(c); break;
      case kind::tick: host.tick_after(c.after); break;
      case kind::start_workers: host.start_workers(); break;
      case kind::start_worker: // (a restarted worker takes in-graph parts again)
        if (in_graph)
          in_graph->worker_back(c.index);
        host.start_worker(c.index);
        break;
      case kind::in_graph_step: host.step_soon(); break; // (by message: a welcome being answered goes out first)
      case kind::grant: host.grant(c.index, c.step); break;
      case kind::stop_worker: host.stop_worker(c.index); break;
      case kind::stop_workers:
        for (auto j : ctl.members())
          if (ctl.status(j) == member::training)
            host.stop_worker(j);
        break;
      case kind::evaluate: host.evaluate(c); break;
      case kind::save: host.save(c); break;
      case kind::finish: host.finish(c); break;
      case kind::restore_shard: // (the in-graph step being computed runs again once the shard is back)
        if (in_graph)
          in_graph->abandon();
        host.restore_shard(c.index);
        break;
      case kind::quit: return host.quit();
      case kind::fail: return host.fail(c.code, c.text);
    }
  }
}

} // namespace actorps
