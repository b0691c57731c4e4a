// A cluster from Slurm's environment, as TensorFlow's SlurmClusterResolver derives it: the job's
// tasks (SLURM_NTASKS) on its nodes (SLURM_JOB_NODELIST in hostlist syntax, e.g. node[01-03,07];
// SLURM_TASKS_PER_NODE, e.g. 2(x3),1, in Slurm's block order) are, in order of SLURM_PROCID, the
// chief (with --slurm-chief), --slurm-ps=N ps tasks (default 1), and the workers; a task listens
// at its node's name and --slurm-port-base (default 8888) plus its place on that node.
// actorps-node --slurm translates this into node.role, node.index, cluster.ps, cluster.workers and
// cluster.chief before its options are parsed (scripts/slurm/actorps.sbatch). Plain logic.
#pragma once

#include <caf/expected.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace actorps {

/// Expands Slurm's hostlist syntax ("node[01-03,07],gpu5" -> node01 node02 node03 node07 gpu5);
/// invalid_config naming SLURM_JOB_NODELIST and the flaw otherwise, also as soon as it would name
/// more than max_nodes (a job has no more nodes than tasks: "node[1-100000000]" is refused before
/// a name is made, not after gigabytes).
caf::expected<std::vector<std::string>> expand_hostlist(const std::string& text, size_t max_nodes);

/// Expands SLURM_TASKS_PER_NODE ("2(x3),1" -> 2 2 2 1); refused past max_nodes entries likewise.
caf::expected<std::vector<uint32_t>> expand_tasks_per_node(const std::string& text, size_t max_nodes);

/// `args` (a node's arguments, without the program name) with --slurm, --slurm-ps=N,
/// --slurm-chief and --slurm-port-base=P replaced by the options the job's environment
/// (`getenv`) stands for; unchanged without --slurm. invalid_config naming the flag or variable:
/// a variable missing or malformed, a job with no worker, an option set both ways.
caf::expected<std::vector<std::string>> translate_slurm(std::vector<std::string> args,
                                                        const std::function<const char*(const char*)>& getenv);

} // namespace actorps
