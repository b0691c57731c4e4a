// The meaning of replica_control's commands (see worker_commands.hpp).
#include "control/worker_commands.hpp"

namespace actorps {

void carry_out(const replica_commands& cmds, worker_command_host& host) {
  using kind = replica_command::kind;
  for (auto& c : cmds) {
    if (host.ended())
      return;
    switch (c.what) {
      case kind::register_hello: host.register_hello(); break;
      case kind::reconnect_chief: host.reconnect_chief(); break;
      case kind::pull: host.pull(); break;
      case kind::compute: host.compute(c); break;
      case kind::push: host.push(); break;
      case kind::report: host.report(c); break;
      case kind::reconnect_shards: host.reconnect_shards(c.shards); break;
      case kind::ask_lease: host.ask_lease(c); break;
      case kind::lease_after: host.arm(worker_timer::lease, c.after); break;
      case kind::retry_after: host.arm(worker_timer::retry, c.after); break;
      case kind::tick_after: host.arm(worker_timer::tick, c.after); break;
      case kind::announce_stop: host.announce_stop(); break;
      case kind::leave: host.leave(c.lease); return;
      case kind::quit: host.quit(); return;
      case kind::fail: host.fail(c.code, c.text); return;
      case kind::log: host.log(c.text); break;
    }
  }
}

replica_commands step_followed(replica_control& ctl, step_phase phase, int rows) {
  using s = replica_control::step_state;
  switch (phase) {
    case step_phase::idle: return {};
    case step_phase::waiting: return ctl.step_status(s::waiting, 0);
    case step_phase::ready: return ctl.step_status(s::ready, rows);
    case step_phase::stopped: return ctl.step_status(s::stopped, 0);
  }
  return {};
}

replica_commands timer_fired(replica_control& ctl, worker_timer t, replica_time now) {
  switch (t) {
    case worker_timer::lease: return ctl.lease_wait_over();
    case worker_timer::retry: return ctl.retry();
    case worker_timer::tick: return ctl.tick(now);
  }
  return {};
}

} // namespace actorps
