// The environment audit end to end (core/environment_audit.hpp): settings a
// rank ran with reach its inventory line, `run` warns once about what
// distorts the figures, and `check`'s environment rule fails on it and passes
// without it. Every record is the binary's own, written here; the setting on
// one rank only comes from an MPMD command line whose second part starts the
// binary through env(1).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "fabricbench/core/environment_audit.hpp"
#include "fabricbench/core/record.hpp"
#include "messages.hpp"
#include "process.hpp"

namespace fb {
namespace {

using test::mpirun;
using test::run_process;

using test::lines_with;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class EnvironmentAudit : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("fb_env_"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  static std::string binary() { return std::string(FB_BINARY); }
  static std::string run_args(const std::string& record) {
    return " run --progress off -q --ops all_reduce -b 4K -e 4K -n 5 -w 1 --out " + record;
  }
  std::string profile(const std::string& rule) const {
    const std::string file = path("env.yaml");
    std::ofstream(file) << "name: env\nbackend: mpi\nsweeps:\n  - {ops: [all_reduce], minbytes: 4K, maxbytes: 4K, "
                           "iters: 3}\nrules:\n  - "
                        << rule << "\n";
    return file;
  }
  std::string judge(const std::string& record, const std::string& rule, const std::string& out) const {
    return binary() + " check --results " + record + " --out-dir " + path(out) + " --profile " + profile(rule);
  }
  std::string dir_;
};

TEST_F(EnvironmentAudit, ASettingOnOneRankIsRecordedWarnedOnceAndFailsTheRule) {
  const std::string record = path("algo.jsonl");
  const auto r = run_process(mpirun(1) + " " + binary() + run_args(record) + " : -np 1 env NCCL_ALGO=Ring " + binary() +
                             run_args(record));
  ASSERT_EQ(r.exit_code, 0) << "a warning, not a failure\n" << r.err;
  const auto warned = lines_with(r.err, "warning: environment:");
  ASSERT_EQ(warned.size(), 2u) << "once per finding, not per rank\n" << r.err;
  EXPECT_NE(r.err.find("warning: environment: NCCL_ALGO=Ring [algo_forced] on rank 1 ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("NCCL_ALGO ((unset) on rank 0; Ring on rank 1) [differs_between_ranks] on ranks 0-1"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("fix: unset NCCL_ALGO"), std::string::npos) << r.err;

  const Results res = read_results(record);
  ASSERT_EQ(res.inventory.size(), 2u);
  const auto& vars0 = res.inventory[0].line.get()["environment"]["variables"];
  const auto& vars1 = res.inventory[1].line.get()["environment"]["variables"];
  EXPECT_FALSE(vars0.contains("NCCL_ALGO")) << vars0.dump();
  EXPECT_EQ(vars1.value("NCCL_ALGO", ""), "Ring") << vars1.dump();
  for (const auto& [name, value] : vars1.items())  // only the three prefixes, without mpirun's bookkeeping
    EXPECT_TRUE((name.starts_with("NCCL_") || name.starts_with("UCX_") || name.starts_with("OMPI_MCA_")) &&
                !name.starts_with("OMPI_MCA_orte_") && !name.starts_with("OMPI_MCA_ess_base_"))
        << name;

  const auto fails = run_process(judge(record, "{kind: environment}", "a"));
  EXPECT_EQ(fails.exit_code, 1) << fails.out << fails.err;
  EXPECT_NE(fails.out.find("NCCL_ALGO=Ring"), std::string::npos) << fails.out;
  const auto allowed =
      run_process(judge(record, "{kind: environment, allow: [algo_forced, differs_between_ranks]}", "b"));
  EXPECT_EQ(allowed.exit_code, 0) << allowed.out << allowed.err;
  const auto page = run_process(binary() + " report html " + record + " -o " + path("algo.html"));
  ASSERT_EQ(page.exit_code, 0) << page.err;
  const std::string html = slurp(path("algo.html"));
  EXPECT_NE(html.find("data-env-flag=\"algo_forced\""), std::string::npos);
  EXPECT_NE(html.find("data-env-flag=\"differs_between_ranks\""), std::string::npos);
  EXPECT_EQ(html.find("data-environment=\"clean\""), std::string::npos);
  const auto wrong = run_process(judge(record, "{kind: environment, allow: [algo]}", "c"));
  EXPECT_EQ(wrong.exit_code, 2) << wrong.out << wrong.err;
  EXPECT_NE(wrong.err.find("'algo' is no environment flag; allowed: algo_forced, proto_forced"), std::string::npos)
      << wrong.err;
}

TEST_F(EnvironmentAudit, ACleanRunWarnsNothingAndPassesTheRule) {
  const std::string record = path("clean.jsonl");
  const auto r = run_process(mpirun(2) + " " + binary() + run_args(record));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(lines_with(r.err, "environment:").empty()) << r.err;
  const Results res = read_results(record);
  ASSERT_EQ(res.inventory.size(), 2u);
  EXPECT_TRUE(res.inventory[0].line.get()["environment"].is_object());
  EXPECT_TRUE(audit_environment(res.inventory).empty());
  const auto passes = run_process(judge(record, "{kind: environment}", "a"));
  EXPECT_EQ(passes.exit_code, 0) << passes.out << passes.err;
  const auto page = run_process(binary() + " report html " + record + " -o " + path("clean.html"));
  ASSERT_EQ(page.exit_code, 0) << page.err;
  const std::string html = slurp(path("clean.html"));
  EXPECT_NE(html.find("data-environment=\"clean\""), std::string::npos);
  EXPECT_EQ(html.find("data-env-flag="), std::string::npos);
}

TEST_F(EnvironmentAudit, NcclConfFileIsReadAndASecretIsNotRecorded) {
  const std::string conf = path("nccl.conf");
  std::ofstream(conf) << "# site settings\nNCCL_P2P_DISABLE=1\nNCCL_DEBUG=WARN\nNOT_NCCL=1\n";
  const std::string record = path("conf.jsonl");
  const auto r = run_process(mpirun(2) + " -x NCCL_CONF_FILE=" + conf + " -x UCX_FAKE_TOKEN=hunter2 " + binary() +
                             run_args(record));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: environment: NCCL_P2P_DISABLE=1 [p2p_disabled] on ranks 0-1"), std::string::npos)
      << r.err;
  EXPECT_TRUE(lines_with(r.err, "differs_between_ranks").empty()) << r.err;
  const std::string text = slurp(record);
  EXPECT_EQ(text.find("hunter2"), std::string::npos) << "a value whose name suggests a secret is not recorded";
  const Results res = read_results(record);
  const auto& env = res.inventory[0].line.get()["environment"];
  EXPECT_EQ(env["withheld"], nlohmann::ordered_json::array({"UCX_FAKE_TOKEN"})) << env.dump();
  bool found = false;
  for (const auto& f : env["files"])
    if (f["path"] == conf) {
      found = true;
      EXPECT_EQ(f["settings"], nlohmann::ordered_json({{"NCCL_P2P_DISABLE", "1"}, {"NCCL_DEBUG", "WARN"}})) << f.dump();
    }
  EXPECT_TRUE(found) << env.dump();
  EXPECT_EQ(run_process(judge(record, "{kind: environment}", "a")).exit_code, 1);
}

// The NIC checks need NICs this machine lacks: topo reads a copied RoCE node's
// sysfs (two 200G ports, mlx5_0 and mlx5_1) and records the environment beside it.
TEST_F(EnvironmentAudit, NicListsAndGidIndexAreJudgedAgainstTheInventory) {
  const std::string tree = std::string(FB_SOURCE_DIR) + "/tests/topo/fixtures/roce-2gpu";
  const auto topo = [&](const std::string& env, const std::string& name) {
    const auto r = run_process("env " + env + " " + binary() + " topo --sysfs-root " + tree + " --out " + path(name));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> flags;
    for (const auto& f : audit_environment(read_results(path(name)).inventory))
      flags.push_back(std::string(fb::name(f.flag)) + ": " + f.detail);
    return flags;
  };
  EXPECT_EQ(topo("NCCL_IB_HCA==mlx5_0:1 NCCL_SOCKET_IFNAME=lo", "bad.jsonl"),
            (std::vector<std::string>{"ib_hca_leaves_out: leaves out mlx5_1:1",
                                      "socket_ifname_slow: it names no interface that is up with a known rate; "
                                      "ens3f0np0 has 200 Gb/s",
                                      "roce_no_gid_index: RoCE ports up: mlx5_0:1, mlx5_1:1"}));
  EXPECT_EQ(topo("NCCL_IB_HCA=mlx5 NCCL_SOCKET_IFNAME=ens3 NCCL_IB_GID_INDEX=3", "good.jsonl"),
            std::vector<std::string>{});
  EXPECT_EQ(topo("NCCL_IB_HCA=^=mlx5_1 NCCL_IB_GID_INDEX=3", "excluded.jsonl"),
            std::vector<std::string>{"ib_hca_leaves_out: leaves out mlx5_1:1"});
}

}  // namespace
}  // namespace fb
