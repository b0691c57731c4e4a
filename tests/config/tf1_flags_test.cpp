// Tests of config/tf1_flags: TF1's node flags become actorps options; worker 0 is the chief
// when no chief host is given; every malformed flag is refused by name.
#include "config/tf1_flags.hpp"

#include "config/cluster_options.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>

using namespace actorps;

namespace {

using args = std::vector<std::string>;

args translate(const args& in) {
  auto out = translate_tf1_flags(in);
  if (!out)
    BOOST_FAIL(describe(out.error()));
  auto sorted = *out;
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

std::string refusal(const args& in) {
  auto out = translate_tf1_flags(in);
  BOOST_REQUIRE(!out);
  BOOST_TEST(out.error() == errc::invalid_config);
  return describe(out.error());
}

} // namespace

BOOST_AUTO_TEST_SUITE(tf1_flags)

BOOST_AUTO_TEST_CASE(arguments_without_tf1_flags_pass_unchanged) {
  args in = {"--node.role=\"ps\"", "--train.max-steps=10", "--config-file=x.ini"};
  BOOST_TEST(*translate_tf1_flags(in) == in);
}

BOOST_AUTO_TEST_CASE(the_documents_command_lines_become_options) {
  // The TF1 between-graph example: no chief job, so worker 0 is the chief at its own address.
  const std::string hosts = "--ps_hosts=ps0.example.com:2222,ps1.example.com:2222";
  const std::string workers = "--worker_hosts=worker0.example.com:2222,worker1.example.com:2222";
  const std::string cluster_ps = R"(--cluster.ps=["ps0.example.com:2222","ps1.example.com:2222"])";
  const std::string cluster_workers = R"(--cluster.workers=["worker0.example.com:2222","worker1.example.com:2222"])";
  const std::string chief = R"(--cluster.chief="worker0.example.com:2222")";
  BOOST_TEST(translate({hosts, workers, "--job_name=ps", "--task_index=1", "--train.max-steps=5"})
             == (args{chief, cluster_ps, cluster_workers, "--node.index=1", R"(--node.role="ps")", "--train.max-steps=5"}));
  BOOST_TEST(translate({hosts, workers, "--job_name", "worker", "--task_index", "0"})
             == (args{chief, cluster_ps, cluster_workers, "--node.index=0", R"(--node.role="chief-worker")"}));
  BOOST_TEST(translate({hosts, workers, "--job_name=worker", "--task_index=1"})
             == (args{chief, cluster_ps, cluster_workers, "--node.index=1", R"(--node.role="worker")"}));
  // With a chief job the chief is its own process and worker 0 an ordinary worker.
  BOOST_TEST(translate({hosts, workers, "--chief_hosts=c:1", "--job_name=worker", "--task_index=0"})
             == (args{R"(--cluster.chief="c:1")", cluster_ps, cluster_workers, "--node.index=0",
                      R"(--node.role="worker")"}));
  BOOST_TEST(translate({"--chief_hosts=c:1", "--job_name=chief"})
             == (args{R"(--cluster.chief="c:1")", R"(--node.role="chief")"}));
  // Role and index alone, the hosts from a config file.
  BOOST_TEST(translate({"--job_name=worker", "--task_index=0"})
             == (args{"--node.index=0", R"(--node.role="worker")"}));
}

BOOST_AUTO_TEST_CASE(malformed_flags_are_refused_by_name) {
  auto has = [](const std::string& text, const std::string& part) {
    BOOST_TEST(text.find(part) != std::string::npos, text);
  };
  has(refusal({"--job_name=master"}), "--job_name must be ps, worker or chief, got \"master\"");
  has(refusal({"--task_index=-1"}), "--task_index must be a number >= 0");
  has(refusal({"--task_index=1x"}), "--task_index must be a number >= 0");
  has(refusal({"--ps_hosts=a:1,,b:2"}), "--ps_hosts entry 1 \"\" is not host:port");
  has(refusal({"--worker_hosts=localhost"}), "--worker_hosts entry 0 \"localhost\" is not host:port");
  has(refusal({"--chief_hosts=a:1,b:2"}), "--chief_hosts must name one host:port");
  has(refusal({"--job_name=ps", "--job_name=worker"}), "--job_name is given twice");
  has(refusal({"--job_name=ps", "--node.role=\"worker\""}), "--job_name and --node.role are both given");
  has(refusal({"--worker_hosts=a:1", "--cluster.workers=[\"a:1\"]"}), "--worker_hosts and --cluster.workers");
  has(refusal({"--worker_hosts=a:1", "--job_name=chief"}), "--job_name=chief needs --chief_hosts");
  has(refusal({"--train.max-steps=3", "--task_index"}), "--task_index needs a value");
}

BOOST_AUTO_TEST_CASE(the_chief_may_share_worker_0s_address_outside_model_parallel_mode) {
  cluster_values v;
  v.role = "chief-worker";
  v.chief = "127.0.0.1:4260";
  v.workers = {"127.0.0.1:4260", "127.0.0.1:4261"};
  auto s = validate(v);
  if (!s)
    BOOST_FAIL(describe(s.error()));
  BOOST_TEST((s->role == node_role::chief_worker));
  v.index = 1;
  BOOST_TEST(describe(validate(v).error()).find("of the chief-worker must be 0") != std::string::npos);
  v.index = 0;
  v.mode = "model-parallel"; // workers listen there: every node needs its own address
  BOOST_TEST(describe(validate(v).error()).find("lists 127.0.0.1:4260 twice") != std::string::npos);
  v.mode = "async";
  v.role = "worker";
  v.workers = {"127.0.0.1:4261", "127.0.0.1:4260"}; // only worker 0's address may be the chief's
  BOOST_TEST(describe(validate(v).error()).find("lists 127.0.0.1:4260 twice") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
