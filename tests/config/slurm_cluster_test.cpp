// Tests of config/slurm_cluster: Slurm's hostlists and task counts expand as Slurm writes them,
// and each task of a job finds its role, index and the whole cluster (SlurmClusterResolver's
// rule: the first tasks are the ps, then the workers; with a chief, task 0 is the chief).
#include "config/slurm_cluster.hpp"

#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <map>

using namespace actorps;

namespace {

using strings = std::vector<std::string>;

std::string refusal(const caf::error& err) {
  BOOST_TEST(err == errc::invalid_config);
  return describe(err);
}

// A getenv over `vars`.
std::function<const char*(const char*)> env(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    auto i = vars.find(name);
    return i == vars.end() ? nullptr : i->second.c_str();
  };
}

} // namespace

BOOST_AUTO_TEST_SUITE(slurm_cluster)

BOOST_AUTO_TEST_CASE(hostlists_expand_as_slurm_writes_them) {
  BOOST_TEST(*expand_hostlist("node[01-03,07]", 100) == (strings{"node01", "node02", "node03", "node07"}));
  BOOST_TEST(*expand_hostlist("a1,b[8-10],c", 100) == (strings{"a1", "b8", "b9", "b10", "c"}));
  BOOST_TEST(*expand_hostlist("localhost", 100) == strings{"localhost"});
  BOOST_TEST(*expand_hostlist("gpu[2-3]-ib", 100) == (strings{"gpu2-ib", "gpu3-ib"}));
  BOOST_TEST(refusal(expand_hostlist("node[01-", 100).error())
             == "invalid_config: SLURM_JOB_NODELIST \"node[01-\": a '[' without its ']'");
  BOOST_TEST(refusal(expand_hostlist("node[5-3]", 100).error())
             == "invalid_config: SLURM_JOB_NODELIST \"node[5-3]\": the range 5-3 runs backwards");
  BOOST_TEST(*expand_tasks_per_node("2(x3),1", 100) == (std::vector<uint32_t>{2, 2, 2, 1}));
  BOOST_TEST(*expand_tasks_per_node("4", 100) == std::vector<uint32_t>{4});
  BOOST_TEST(refusal(expand_tasks_per_node("2(x", 100).error())
             == "invalid_config: SLURM_TASKS_PER_NODE \"2(x\" is not Slurm's count list, e.g. 2(x3),1");
}

// Issue 50, item 14: node[1-100000000] ran for 24 s and aborted under a 6 GB cap. A job has no
// more nodes than tasks: the expansion stops there, before it makes a name.
BOOST_AUTO_TEST_CASE(hostlists_name_no_more_nodes_than_the_job_has_tasks) {
  BOOST_TEST(expand_hostlist("node[1-3]", 3)->size() == 3u);
  BOOST_TEST(refusal(expand_hostlist("node[1-100000000]", 3).error())
             == "invalid_config: SLURM_JOB_NODELIST \"node[1-100000000]\": names more than 3 nodes, more than the job's tasks");
  BOOST_TEST(refusal(expand_hostlist("a,b,node[1-2]", 3).error()).find("names more than 3 nodes") != std::string::npos);
  BOOST_TEST(refusal(expand_hostlist("a,b,c,d", 3).error()).find("names more than 3 nodes") != std::string::npos);
  BOOST_TEST(expand_tasks_per_node("1(x3)", 3)->size() == 3u);
  BOOST_TEST(refusal(expand_tasks_per_node("1(x100000000)", 3).error())
             == "invalid_config: SLURM_TASKS_PER_NODE \"1(x100000000)\" counts more than 3 nodes, more than the job's tasks");
}

BOOST_AUTO_TEST_CASE(each_task_finds_its_role_and_the_cluster) {
  // 4 tasks on two nodes, 2 each: task 0 the ps, tasks 1-3 the workers (worker 0 is the chief)
  auto vars = std::map<std::string, std::string>{{"SLURM_NTASKS", "4"},
                                                 {"SLURM_JOB_NODELIST", "n[1-2]"},
                                                 {"SLURM_TASKS_PER_NODE", "2(x2)"}};
  auto task = [&](int procid, strings extra) {
    auto v = vars;
    v["SLURM_PROCID"] = std::to_string(procid);
    strings args{"--slurm", "--train.max-steps=5"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto out = translate_slurm(args, env(v));
    if (!out)
      BOOST_FAIL(describe(out.error()));
    auto sorted = *out;
    std::sort(sorted.begin(), sorted.end());
    return sorted;
  };
  const strings cluster{"--cluster.chief=\"n1:8889\"", "--cluster.ps=[\"n1:8888\"]",
                        "--cluster.workers=[\"n1:8889\",\"n2:8888\",\"n2:8889\"]", "--train.max-steps=5"};
  auto with = [&](strings more) {
    more.insert(more.end(), cluster.begin(), cluster.end());
    std::sort(more.begin(), more.end());
    return more;
  };
  BOOST_TEST(task(0, {}) == with({"--node.index=0", "--node.role=\"ps\""}));
  BOOST_TEST(task(1, {}) == with({"--node.index=0", "--node.role=\"chief-worker\""}));
  BOOST_TEST(task(3, {}) == with({"--node.index=2", "--node.role=\"worker\""}));
  // a chief task of its own and 2 ps, ports from 9000
  auto chief = task(0, {"--slurm-chief", "--slurm-ps=2", "--slurm-port-base=9000"});
  BOOST_TEST((std::find(chief.begin(), chief.end(), "--node.role=\"chief\"") != chief.end()));
  BOOST_TEST((std::find(chief.begin(), chief.end(), "--cluster.chief=\"n1:9000\"") != chief.end()));
  BOOST_TEST((std::find(chief.begin(), chief.end(), "--cluster.ps=[\"n1:9001\",\"n2:9000\"]") != chief.end()));
  BOOST_TEST((std::find(chief.begin(), chief.end(), "--cluster.workers=[\"n2:9001\"]") != chief.end()));
}

BOOST_AUTO_TEST_CASE(a_job_that_does_not_fit_is_refused_by_name) {
  auto base = std::map<std::string, std::string>{
    {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_JOB_NODELIST", "n1"}, {"SLURM_TASKS_PER_NODE", "2"}};
  BOOST_TEST(refusal(translate_slurm({"--slurm", "--slurm-ps=2"}, env(base)).error())
             == "invalid_config: --slurm-ps=2 leaves no worker among the job's 2 tasks");
  auto missing = base;
  missing.erase("SLURM_PROCID");
  BOOST_TEST(refusal(translate_slurm({"--slurm"}, env(missing)).error())
             == "invalid_config: --slurm: SLURM_PROCID is not set (run the node under srun or sbatch)");
  auto wrong = base;
  wrong["SLURM_TASKS_PER_NODE"] = "3";
  BOOST_TEST(refusal(translate_slurm({"--slurm"}, env(wrong)).error())
             == "invalid_config: --slurm: SLURM_TASKS_PER_NODE \"3\" counts 3 tasks, SLURM_NTASKS is 2");
  BOOST_TEST(refusal(translate_slurm({"--slurm", "--node.role=\"ps\""}, env(base)).error())
             == "invalid_config: --slurm and --node.role both set node.role: use one");
  BOOST_TEST(*translate_slurm({"--x=1"}, env(base)) == strings{"--x=1"}); // (no --slurm: unchanged)
  BOOST_TEST(refusal(translate_slurm({"--slurm-ps=1"}, env(base)).error())
             == "invalid_config: --slurm-ps needs --slurm");
  auto huge = base; // (issue 50, item 14: a forged node list costs no memory)
  huge["SLURM_JOB_NODELIST"] = "node[1-100000000]";
  BOOST_TEST(refusal(translate_slurm({"--slurm"}, env(huge)).error())
             == "invalid_config: SLURM_JOB_NODELIST \"node[1-100000000]\": names more than 2 nodes, more than the job's tasks");
}

BOOST_AUTO_TEST_SUITE_END()
