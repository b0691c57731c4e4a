// Where a worker's begun step stands, as its step (actors/replica_step) and a model-parallel
// slice's sequencer (control/slice_sequencer) report it; control/worker_commands turns it into
// the controller's input for the actor and the simulator alike.
#pragma once

namespace actorps {

/// idle: between steps; waiting: for other slices' parts; ready: the gradients are in the model;
/// stopped: another slice of the group stopped before this step (drop it).
enum class step_phase { idle, waiting, ready, stopped };

} // namespace actorps
