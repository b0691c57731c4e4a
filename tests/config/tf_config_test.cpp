// Tests of config/tf_config: Kubeflow's and SageMaker's TF_CONFIG (TFConfigClusterResolver's
// layout) becomes actorps options; without a chief task worker 0 is the chief; every malformed
// field is refused by name.
#include "config/tf_config.hpp"

#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>

using namespace actorps;

namespace {

using args = std::vector<std::string>;

args options(const std::string& json) {
  auto out = tf_config_options(json);
  if (!out)
    BOOST_FAIL(describe(out.error()));
  auto sorted = *out;
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

std::string refusal(const std::string& json) {
  auto out = tf_config_options(json);
  BOOST_REQUIRE(!out);
  BOOST_TEST(out.error() == errc::invalid_config);
  return describe(out.error());
}

const std::string cluster = R"("cluster": {"chief": ["c:2222"], "ps": ["p0:2222", "p1:2222"],
                                           "worker": ["w0:2222", "w1:2222"]})";

} // namespace

BOOST_AUTO_TEST_SUITE(tf_config)

BOOST_AUTO_TEST_CASE(every_task_of_a_cluster_with_a_chief) {
  const args common = {"--cluster.chief=\"c:2222\"", "--cluster.ps=[\"p0:2222\",\"p1:2222\"]",
                       "--cluster.workers=[\"w0:2222\",\"w1:2222\"]"};
  auto with = [&](args more) {
    more.insert(more.end(), common.begin(), common.end());
    std::sort(more.begin(), more.end());
    return more;
  };
  BOOST_TEST(options("{" + cluster + R"(, "task": {"type": "chief", "index": 0}})")
             == with({"--node.index=0", "--node.role=\"chief\""}));
  BOOST_TEST(options("{" + cluster + R"(, "task": {"type": "ps", "index": 1}})")
             == with({"--node.index=1", "--node.role=\"ps\""}));
  BOOST_TEST(options("{" + cluster + R"(, "task": {"type": "worker", "index": 1}})")
             == with({"--node.index=1", "--node.role=\"worker\""}));
}

// As TF1's between-graph examples: without a chief task, worker 0 runs the chief beside itself.
BOOST_AUTO_TEST_CASE(without_a_chief_task_worker_0_is_the_chief) {
  const std::string two = R"({"cluster": {"ps": ["p:1"], "worker": ["w0:1", "w1:1"]}, "task": {"type": "worker", "index": 0}})";
  auto out = options(two);
  BOOST_TEST((std::find(out.begin(), out.end(), "--node.role=\"chief-worker\"") != out.end()));
  BOOST_TEST((std::find(out.begin(), out.end(), "--cluster.chief=\"w0:1\"") != out.end()));
  // "master" is TF's older name of the chief
  auto master = options(R"({"cluster": {"master": ["m:1"], "ps": ["p:1"], "worker": ["w:1"]}, "task": {"type": "master", "index": 0}})");
  BOOST_TEST((std::find(master.begin(), master.end(), "--node.role=\"chief\"") != master.end()));
}

BOOST_AUTO_TEST_CASE(each_malformed_field_is_refused_by_name) {
  BOOST_TEST(refusal("{").find("TF_CONFIG is not JSON (byte 1: ") != std::string::npos, refusal("{"));
  // (issue 50, item 10: a TF_CONFIG that is not JSON said "byte 0: expected null")
  BOOST_TEST(refusal("cluster=ps") == "invalid_config: TF_CONFIG is not JSON (byte 0: unexpected character 'c'); it holds an "
                                      "object such as {\"cluster\": {\"worker\": [\"host:port\"]}, \"task\": {\"type\": "
                                      "\"worker\", \"index\": 0}}",
             refusal("cluster=ps"));
  BOOST_TEST(refusal("[1]") == "invalid_config: TF_CONFIG must be a JSON object with \"cluster\" and \"task\"");
  BOOST_TEST(refusal(R"({"task": {"type": "ps", "index": 0}})") == "invalid_config: TF_CONFIG has no \"cluster\" object");
  BOOST_TEST(refusal("{" + cluster + "}") == "invalid_config: TF_CONFIG has no \"task\" object");
  BOOST_TEST(refusal("{" + cluster + R"(, "task": {"type": "evaluator", "index": 0}})")
             == "invalid_config: TF_CONFIG task.type must be chief, master, ps or worker, got \"evaluator\"");
  BOOST_TEST(refusal("{" + cluster + R"(, "task": {"type": "worker", "index": 2}})")
             == "invalid_config: TF_CONFIG task.index 2 is outside cluster.worker, which lists 2 tasks");
  BOOST_TEST(refusal("{" + cluster + R"(, "task": {"type": "worker", "index": -1}})")
             == "invalid_config: TF_CONFIG task.index must be a whole number >= 0, got -1");
  BOOST_TEST(refusal("{" + cluster + R"(, "task": {"type": "worker"}})")
             == "invalid_config: TF_CONFIG task.index must be a whole number >= 0, got nothing");
  BOOST_TEST(refusal(R"({"cluster": {"ps": ["p:1"], "worker": ["w0"]}, "task": {"type": "ps", "index": 0}})")
             == "invalid_config: TF_CONFIG cluster.worker entry 0 \"w0\" is not host:port");
  BOOST_TEST(refusal(R"({"cluster": {"ps": "p:1", "worker": ["w:1"]}, "task": {"type": "ps", "index": 0}})")
             == "invalid_config: TF_CONFIG cluster.ps must be a list of \"host:port\" strings");
  BOOST_TEST(refusal(R"({"cluster": {"chief": ["a:1", "b:1"], "ps": ["p:1"], "worker": ["w:1"]}, "task": {"type": "ps", "index": 0}})")
             == "invalid_config: TF_CONFIG cluster.chief must list one task, got 2");
  BOOST_TEST(refusal(R"({"cluster": {"ps": ["p:1"]}, "task": {"type": "ps", "index": 0}})")
             == "invalid_config: TF_CONFIG cluster.worker must list at least one task");
  BOOST_TEST(refusal(R"({"cluster": {"ps": ["p:1"], "worker": ["w:1"], "evaluator": ["e:1"]}, "task": {"type": "ps", "index": 0}})")
             == "invalid_config: TF_CONFIG cluster.evaluator: actorps has no such job (chief, master, ps, worker)");
}

// actorps-node reads TF_CONFIG when its command line gives no role; an option set both ways is
// refused by name.
BOOST_AUTO_TEST_CASE(a_node_reads_tf_config_without_a_role_of_its_own) {
  const std::string env = "{" + cluster + R"(, "task": {"type": "ps", "index": 0}})";
  auto out = with_tf_config({"--train.max-steps=5"}, env.c_str());
  BOOST_REQUIRE(out);
  BOOST_TEST(out->size() == 6u); // its own option and TF_CONFIG's five
  BOOST_TEST(out->front() == "--train.max-steps=5");
  BOOST_TEST(*with_tf_config({"--node.role=\"local\""}, env.c_str()) == args{"--node.role=\"local\""});
  BOOST_TEST(*with_tf_config({"--x=1"}, nullptr) == args{"--x=1"});
  BOOST_TEST(*with_tf_config({"--x=1"}, "") == args{"--x=1"});
  auto both = with_tf_config({"--cluster.ps=[\"a:1\"]"}, env.c_str());
  BOOST_REQUIRE(!both);
  BOOST_TEST(describe(both.error()) == "invalid_config: TF_CONFIG and --cluster.ps both set cluster.ps: use one");
}

BOOST_AUTO_TEST_SUITE_END()
