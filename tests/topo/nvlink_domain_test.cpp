// Multi-node NVLink domains through NVML's fabric info (issue 37): hosts
// standing in for GB200 NVL72 trays, each GPU's cluster UUID and clique from
// the fake NVML; topo names each domain with its size and hosts and flags a
// GPU whose registration is not completed or whose domain is not its node's.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fabricbench/topo/inventory.hpp"
#include "fabricbench/topo/report.hpp"
#include "fake_nvml.hpp"

namespace fb::topo {
namespace {

constexpr const char* kRackA = "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9";
constexpr const char* kRackB = "ffeeddcc-bbaa-9988-7766-554433221100";

json tray(test::FakeNvml nvml, int node, const std::string& host) {
  LinkedVersions linked{"13.0", "13.0", "2.28.9"};
  return to_json(read_inventory(Sysfs(std::string(FB_TOPO_FIXTURES) + "/hgx-h100-8gpu-8ndr"), nvml, linked,
                                {node * 4, node, 0, host, {}}, CudaView{}));
}

std::vector<std::string> flags_of(const json& inv) { return inv["flags"].get<std::vector<std::string>>(); }

bool any_flag_has(const json& inv, const std::string& text) {
  for (const auto& f : flags_of(inv))
    if (f.find(text) != std::string::npos) return true;
  return false;
}

// Two trays in one clique of rack A and one tray in another clique: two
// domains, of 8 GPUs on two hosts and of 4 on one, and nothing flagged.
TEST(NvlinkDomains, TwoTraysInOneCliqueAndOneInAnotherAreTwoDomains) {
  const std::vector<json> lines{tray(test::fake_gb200_tray(kRackA, 1), 0, "tray-a"),
                                tray(test::fake_gb200_tray(kRackA, 1), 1, "tray-b"),
                                tray(test::fake_gb200_tray(kRackA, 2), 2, "tray-c")};
  const auto domains = nvlink_domains(lines);
  ASSERT_EQ(domains.size(), 2u);
  EXPECT_EQ(domains[0].id, std::string(kRackA) + "/1");
  EXPECT_EQ(domains[0].gpus, 8);
  EXPECT_EQ(domains[0].hosts, (std::vector<std::string>{"tray-a", "tray-b"}));
  EXPECT_EQ(domains[1].id, std::string(kRackA) + "/2");
  EXPECT_EQ(domains[1].gpus, 4);
  EXPECT_EQ(domains[1].hosts, std::vector<std::string>{"tray-c"});
  for (const auto& l : lines) EXPECT_FALSE(any_flag_has(l, "NVLink")) << l["flags"].dump();
  const json& gpu = lines[0]["gpus"][0];
  EXPECT_EQ(gpu["fabric"]["state"], "completed");
  EXPECT_EQ(gpu["fabric"]["cluster_uuid"], kRackA);
  EXPECT_EQ(gpu["fabric"]["clique_id"], 1);
  const std::string report = format_report(lines, find_differences(lines));
  EXPECT_NE(report.find("NVLink domains (multi-node NVLink, cluster UUID/clique): 2"), std::string::npos) << report;
  EXPECT_NE(report.find(std::string(kRackA) + "/1: 8 GPUs on 2 hosts: tray-a, tray-b"), std::string::npos) << report;
  EXPECT_NE(report.find(std::string(kRackA) + "/2: 4 GPUs on 1 host: tray-c"), std::string::npos) << report;
  EXPECT_NE(report.find("the job spans 2 NVLink domains: traffic between them takes the network"), std::string::npos);
  EXPECT_NE(report.find("NVLink domain " + std::string(kRackA) + "/1  fabric completed"), std::string::npos);
}

// A GPU still registering is flagged and left out of its domain's count.
TEST(NvlinkDomains, AGpuWhoseRegistrationIsInProgressIsFlaggedAndNotCounted) {
  auto slow = test::fake_gb200_tray(kRackA, 1);
  slow.gpus[2].fabric.state = FabricState::in_progress;
  const std::vector<json> lines{tray(test::fake_gb200_tray(kRackA, 1), 0, "tray-a"), tray(slow, 1, "tray-b")};
  EXPECT_FALSE(any_flag_has(lines[0], "NVLink fabric"));
  EXPECT_TRUE(any_flag_has(lines[1], "GPU2")) << lines[1]["flags"].dump();
  EXPECT_TRUE(any_flag_has(lines[1], "NVLink fabric state in_progress, not completed")) << lines[1]["flags"].dump();
  EXPECT_EQ(lines[1]["gpus"][2]["fabric"]["state"], "in_progress");
  const auto domains = nvlink_domains(lines);
  ASSERT_EQ(domains.size(), 1u);
  EXPECT_EQ(domains[0].gpus, 7);
}

// A GPU in another domain than its node's other three is flagged; so is one
// whose registration completed with an error.
TEST(NvlinkDomains, AGpuOutsideItsNodesDomainOrFailedIsFlagged) {
  auto odd = test::fake_gb200_tray(kRackA, 1);
  odd.gpus[3].fabric.cluster_uuid = kRackB;
  odd.gpus[1].fabric.status = "Unknown Error (NVML error 999)";
  const json line = tray(odd, 0, "tray-a");
  EXPECT_TRUE(any_flag_has(
      line, "NVLink domain " + std::string(kRackB) + "/1 differs from its node's other GPUs' (" + kRackA + "/1)"))
      << line["flags"].dump();
  EXPECT_TRUE(any_flag_has(line, "NVLink fabric registration failed (Unknown Error (NVML error 999))"))
      << line["flags"].dump();
  int nvlink_flags = 0;
  for (const auto& f : flags_of(line)) nvlink_flags += f.find("NVLink") != std::string::npos ? 1 : 0;
  EXPECT_EQ(nvlink_flags, 2) << line["flags"].dump();
}

// A driver whose NVML cannot say is unknown with the reason, never a guess;
// GPUs outside any multi-node fabric (HGX H100) say not_supported and flag
// nothing.
TEST(NvlinkDomains, UnknownSaysWhyAndAnHgxIsInNoDomain) {
  auto old = test::fake_gb200_tray(kRackA, 1);
  old.gpus[0].failing.insert("fabric");
  const json line = tray(old, 0, "tray-a");
  EXPECT_TRUE(line["gpus"][0]["fabric"].is_null());
  EXPECT_EQ(line["gpus"][0]["unknown"]["fabric"], "fabric: Unknown Error (NVML error 999)");
  const json hgx = tray(test::fake_hgx_h100(), 0, "hgx");
  EXPECT_EQ(hgx["gpus"][0]["fabric"], (json{{"state", "not_supported"}}));
  EXPECT_TRUE(nvlink_domains({hgx}).empty());
  EXPECT_EQ(format_domains(nvlink_domains({hgx})), "");
  const auto absent = absent_nvml("NVML not loaded: no driver");
  EXPECT_EQ(absent->fabric(0).why(), "NVML not loaded: no driver");
}

}  // namespace
}  // namespace fb::topo
