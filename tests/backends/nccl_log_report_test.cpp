// `fabricbench report nccl-log` and the log model under it, on the recorded
// H200 log and on constructed multi-node logs (tests/backends/fixtures/nccl-log,
// see its README for what is real and what follows NCCL's format strings).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "nccl/nccl_log.hpp"
#include "fabricbench/backends/nccl_log/nccl_log_report.hpp"
#include "process.hpp"

namespace fb::nccl_log {
namespace {

std::string fixture_path(const std::string& name) {
  return std::string(FB_SOURCE_DIR) + "/tests/backends/fixtures/nccl-log/" + name;
}

std::string fixture(const std::string& name) {
  std::ifstream in(fixture_path(name));
  EXPECT_TRUE(in) << name;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

const Link* link(const Communicator& c, int from, int to) {
  for (const auto& [key, l] : c.links)
    if (l.from == from && l.to == to) return &l;
  return nullptr;
}

TEST(NcclLogLine, WriterIsFoundBehindLauncherPrefixes) {
  const Line tagged = parse_line("[1,3]<stdout>:gpu-a02:5202:5292 [1] NCCL INFO Using network IB");
  EXPECT_TRUE(tagged.nccl);
  EXPECT_EQ(tagged.writer.host, "gpu-a02");
  EXPECT_EQ(tagged.writer.pid, "5202");
  EXPECT_EQ(tagged.writer.device, 1);
  EXPECT_EQ(*tagged.network, "IB");
  const Line labelled = parse_line("12: node7:300:350 [3] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0");
  EXPECT_EQ(labelled.writer.host, "node7");
  EXPECT_EQ(labelled.connection->side, Side::send);
  EXPECT_FALSE(parse_line("# nccl-tests version 2.19.6").nccl);
  EXPECT_FALSE(parse_line("     8388608       2097152     float     sum").nccl);
}

// A line cut right after its level (a log truncated mid-line) once threw
// std::out_of_range out of the reader (the fuzzer's find).
TEST(NcclLogLine, ALineThatEndsAtItsLevelIsAnEmptyMessage) {
  for (const char* line : {"gpu-a02:5202:5292 [1] NCCL INFO", "gpu-a02:5202:5292 [1] NCCL WARN"}) {
    const Line cut = parse_line(line);
    EXPECT_TRUE(cut.nccl) << line;
    EXPECT_EQ(cut.writer.host, "gpu-a02") << line;
    EXPECT_FALSE(cut.connection) << line;
  }
}

TEST(NcclLogLine, EveryNetSpellingIsRead) {
  const auto pxn = parse_via("NET/IB/0(1)/GDRDMA(PCI)/Shared");
  ASSERT_TRUE(pxn);
  EXPECT_EQ(pxn->mechanism, "IB");
  EXPECT_EQ(pxn->net_device, 0);
  EXPECT_EQ(pxn->via_rank, 1);
  EXPECT_TRUE(pxn->gdr);
  EXPECT_TRUE(pxn->gdr_pci);
  EXPECT_EQ(token(*pxn), "NET/IB/GDRDMA(PCI)/PXN");
  const auto plugin = parse_via("NET/AWS Libfabric/0/GDRDMA");
  ASSERT_TRUE(plugin);
  EXPECT_EQ(plugin->mechanism, "AWS Libfabric");
  EXPECT_EQ(token(*plugin), "NET/AWS_Libfabric/GDRDMA");
  EXPECT_EQ(token(*parse_via("NET/IB/3")), "NET/IB");
  EXPECT_EQ(token(*parse_via("NET/Socket/0")), "NET/Socket");
}

TEST(NcclLogLine, EveryP2pAndShmSpellingIsRead) {
  EXPECT_EQ(token(*parse_via("P2P/CUMEM/read")), "P2P/CUMEM");
  EXPECT_TRUE(parse_via("P2P/CUMEM/read")->read);
  EXPECT_TRUE(parse_via("P2P/IPC/CE")->copy_engine);
  EXPECT_EQ(token(*parse_via("P2P/IPC/read")), "P2P/IPC");
  EXPECT_EQ(token(*parse_via("P2P/direct pointer/read")), "P2P/direct");
  EXPECT_EQ(token(*parse_via("P2P/MNNVL")), "P2P/MNNVL");
  const auto indirect = parse_via("P2P/indirect/1[3d000]/read");
  EXPECT_EQ(token(*indirect), "P2P/indirect");
  EXPECT_EQ(indirect->via_rank, 1);
  EXPECT_EQ(token(*parse_via("SHM/direct/direct")), "SHM");
  EXPECT_EQ(token(*parse_via("direct shared memory")), "SHM");
  EXPECT_FALSE(parse_via("something else"));
}

TEST(NcclLogModel, RecordedOneGpuLogIsOneRankWithItsVersionAndNetwork) {
  const Log log = read_log(fixture("h200-1gpu-all_reduce.log"));
  ASSERT_EQ(log.comms.size(), 1u);
  const Communicator& c = log.comms[0];
  EXPECT_EQ(c.id, "0xbc4ec484c5813251");
  EXPECT_EQ(c.nranks, 1);
  EXPECT_EQ(c.versions, (std::set<std::string>{"2.28.9+cuda13.0"}));
  EXPECT_EQ(c.networks, (std::set<std::string>{"Socket"}));
  EXPECT_TRUE(c.links.empty());
  EXPECT_EQ(c.host_of(0), "vm");
  EXPECT_EQ(log.nccl_lines, 39u);  // the nvbandwidth lines after them are not NCCL's
  EXPECT_EQ(missing_lines_hint(log), "");
}

TEST(NcclLogModel, InterleavedProcessesJoinIntoOneCommunicatorByCommId) {
  const Log log = read_log(fixture("two-nodes-ib-gdr.log"));
  ASSERT_EQ(log.comms.size(), 1u);
  const Communicator& c = log.comms[0];
  EXPECT_EQ(c.id, "0x7f3e2a9c11d04b21");
  EXPECT_EQ(c.nranks, 4);
  EXPECT_EQ(c.nnodes, 2);
  EXPECT_EQ(c.host_of(1), "gpu-a01");
  EXPECT_EQ(c.host_of(2), "gpu-a02");
  ASSERT_TRUE(link(c, 0, 1));
  EXPECT_EQ(link(c, 0, 1)->token, "P2P/CUMEM");
  EXPECT_EQ(link(c, 0, 1)->channels, (std::set<int>{0, 1}));
  ASSERT_TRUE(link(c, 3, 0));
  EXPECT_EQ(link(c, 3, 0)->token, "NET/IB/GDRDMA");  // send and receive sides: one link
  EXPECT_EQ(link(c, 3, 0)->channels.size(), 2u);
  EXPECT_EQ(c.path_types, (std::set<std::string>{"NVL", "PIX"}));
}

TEST(NcclLogReport, GpuDirectRdmaBetweenNodesAndP2pInside) {
  const Log log = read_log(fixture("two-nodes-ib-gdr.log"));
  const auto pairs = node_pairs(log.comms.at(0));
  ASSERT_EQ(pairs.size(), 3u);
  EXPECT_EQ(pairs[0].a, "gpu-a01");  // the inter-node pair first
  EXPECT_EQ(pairs[0].b, "gpu-a02");
  EXPECT_EQ(pairs[0].verdict, "NET/IB with GPUDirect RDMA");
  EXPECT_EQ(pairs[1].a, pairs[1].b);
  EXPECT_EQ(pairs[1].verdict, "GPU peer-to-peer (P2P)");
}

TEST(NcclLogReport, SocketFallbackIsCalledOut) {
  const Log log = read_log(fixture("two-nodes-socket.log"));
  ASSERT_EQ(log.comms.size(), 1u);
  const auto pairs = node_pairs(log.comms[0]);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].a, "node1");
  EXPECT_EQ(pairs[0].b, "node2");
  EXPECT_EQ(pairs[0].verdict, "inter-node traffic on NET/Socket: TCP fallback, not InfiniBand");
}

TEST(NcclLogReport, InfinibandWithoutGpuDirectAndSharedMemoryInside) {
  const Log log = read_log(fixture("two-nodes-ib-no-gdr.log"));
  ASSERT_EQ(log.comms.size(), 1u);
  const Communicator& c = log.comms[0];
  // Rank 3's process is not in the log: its node is named by rank.
  const auto pairs = node_pairs(c);
  ASSERT_EQ(pairs.size(), 3u);
  for (const auto& p : pairs) {
    if (p.a == p.b) {
      EXPECT_NE(p.verdict.find("host shared memory (SHM)"), std::string::npos) << p.verdict;
      continue;
    }
    EXPECT_NE(p.verdict.find("no GPUDirect RDMA: NET/IB traffic is staged through host memory"), std::string::npos)
        << p.verdict;
  }
  std::set<std::string> one_to_two;
  for (const auto& [key, l] : c.links)
    if (l.from == 1 && l.to == 2) one_to_two.insert(l.token);
  EXPECT_EQ(one_to_two, (std::set<std::string>{"NET/IB", "NET/IB/PXN"}));  // channel 0 through rank 0's NIC
  bool pxn_said = false;
  for (const auto& p : pairs) pxn_said = pxn_said || p.verdict.find("PXN") != std::string::npos;
  EXPECT_TRUE(pxn_said);
}

TEST(NcclLogReport, MixedSocketAndRdmaChannelsAreCounted) {
  Transport ib = *parse_via("NET/IB/0/GDRDMA"), sock = *parse_via("NET/Socket/0");
  EXPECT_EQ(verdict(true, {ib, ib, sock}),
            "1 of 3 channels on NET/Socket: TCP fallback beside the RDMA network; NET/IB with GPUDirect RDMA");
  const Transport plain = *parse_via("NET/IB/0");
  EXPECT_EQ(verdict(true, {ib, plain}), "GPUDirect RDMA on 1 of 2 NET/IB channels only");
  EXPECT_EQ(verdict(true, {*parse_via("NET/IB/0/GDRDMA(PCI)")}), "NET/IB with GPUDirect RDMA (through PCIe: GDRDMA(PCI))");
}

TEST(NcclLogModel, OldSpellingsAndPluginsWithoutCommunicatorLines) {
  const Log log = read_log(fixture("old-spellings.log"));
  ASSERT_EQ(log.comms.size(), 1u);
  const Communicator& c = log.comms[0];
  EXPECT_EQ(c.nranks, 5);  // as many as the links name
  EXPECT_EQ(link(c, 0, 1)->token, "P2P/IPC");
  EXPECT_EQ(link(c, 1, 2)->token, "SHM");
  EXPECT_EQ(link(c, 2, 3)->token, "P2P/indirect");
  std::set<std::string> net;
  for (const auto& [key, l] : c.links)
    if (l.from == 0 && l.to == 4) net.insert(l.token);
  EXPECT_EQ(net, (std::set<std::string>{"NET/AWS_Libfabric/GDRDMA", "NET/IB/GDRDMA(PCI)"}));
}

TEST(NcclLogModel, NvlsAndTheAlgorithmsNcclChose) {
  const Log log = read_log(fixture("nvls-tuning.log"));
  ASSERT_EQ(log.comms.size(), 1u);
  const Communicator& c = log.comms[0];
  EXPECT_EQ(c.nvls_channels, 16);
  EXPECT_TRUE(c.nvls_support);
  EXPECT_EQ(c.algorithms.at("AllReduce"), (std::set<std::string>{"RING/LL", "NVLS/SIMPLE"}));
  const std::string text = format_text(log, {"nvls-tuning.log"});
  EXPECT_NE(text.find("NVLS: 16 channels"), std::string::npos) << text;
  EXPECT_NE(text.find("AllReduce NVLS/SIMPLE, RING/LL"), std::string::npos) << text;
}

TEST(NcclLogModel, ConnectionsGoToTheCommunicatorTheyFit) {
  // One process, two communicators: the world (4 ranks, rank 2) and a pair (2 ranks, rank 0).
  const char* text =
      "h:1:1 [0] NCCL INFO ncclCommInitRankConfig comm 0xa rank 2 nranks 4 cudaDev 0 busId 1 commId 0x11 - Init START\n"
      "h:1:1 [0] NCCL INFO ncclCommSplit comm 0xb rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1 parent 0xa color 1 "
      "key 0 commId 0x22 localSize 0 used 0 bytes on core 0 - Init COMPLETE\n"
      "h:1:5 [0] NCCL INFO Channel 00/0 : 2[0] -> 3[1] via P2P/CUMEM\n"
      "h:1:5 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n";
  const Log log = read_log(text);
  ASSERT_EQ(log.comms.size(), 2u);
  EXPECT_EQ(log.comms[0].id, "0x11");
  EXPECT_TRUE(link(log.comms[0], 2, 3));
  EXPECT_FALSE(link(log.comms[0], 0, 1));
  EXPECT_EQ(log.comms[1].id, "0x22");
  EXPECT_TRUE(link(log.comms[1], 0, 1));
}

TEST(NcclLogReport, AFilterWithoutInitLinesIsExplained) {
  const Log log = read_log("h:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.2<0>\n");
  EXPECT_NE(missing_lines_hint(log).find("NCCL_DEBUG_SUBSYS must include INIT"), std::string::npos);
  EXPECT_NE(missing_lines_hint(read_log("h:1:1 [0] NCCL WARN Cuda failure 'out of memory'\n")).find("NCCL_DEBUG=INFO"),
            std::string::npos);
}

TEST(NcclLogReport, ChannelListsAreRanges) {
  EXPECT_EQ(channel_ranges({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(channel_ranges({}), "");
}

TEST(NcclLogReport, JsonNamesEveryCommunicatorLinkAndPair) {
  const auto j = format_json(read_log(fixture("two-nodes-ib-gdr.log")), {"a.log"});
  ASSERT_EQ(j["communicators"].size(), 1u);
  const auto& c = j["communicators"][0];
  EXPECT_EQ(c["nranks"], 4);
  EXPECT_EQ(c["nnodes"], 2);
  EXPECT_EQ(c["links"].size(), 4u);
  EXPECT_EQ(c["node_pairs"][0]["inter_node"], true);
  EXPECT_EQ(c["node_pairs"][0]["verdict"], "NET/IB with GPUDirect RDMA");
}

// Hand-written logs (fixtures/nccl-log/README.md says where each line shape comes from): no
// multi-node NVLink machine has been available to record one.
TEST(NcclLogReport, MnnvlHostsReadAsOneNvlinkDomain) {
  const Log log = read_log(fixture("mnnvl-one-domain.log"));
  ASSERT_EQ(log.comms.size(), 1u);
  const Communicator& c = log.comms[0];
  EXPECT_EQ(c.mnnvl, 1);
  const auto domain = nvlink_domain(c);
  ASSERT_TRUE(domain);
  EXPECT_EQ(domain->hosts, (std::vector<std::string>{"gb-t01", "gb-t02"}));
  EXPECT_EQ(domain->gpus, 8);
  for (const auto& p : node_pairs(c)) EXPECT_FALSE(p.nvlink_fallback) << p.a << " " << p.b << ": " << p.verdict;
  const std::string text = format_text(log, {"mnnvl-one-domain.log"});
  EXPECT_NE(text.find("one NVLink domain (MNNVL): hosts gb-t01, gb-t02 (8 GPUs)"), std::string::npos) << text;
  const auto j = format_json(log, {"a.log"});
  // at(): a missing key throws and fails the test (const operator[] would not).
  EXPECT_EQ(j.at("communicators").at(0).at("nvlink_domain").at("hosts"),
            (std::vector<std::string>{"gb-t01", "gb-t02"}));
  EXPECT_EQ(j.at("communicators").at(0).at("nvlink_domain").at("gpus"), 8);
}

TEST(NcclLogReport, MnnvlHostsOnTheNetworkAreFlaggedAsAFallback) {
  const Log log = read_log(fixture("mnnvl-ib-fallback.log"));
  ASSERT_EQ(log.comms.size(), 1u);
  const Communicator& c = log.comms[0];
  EXPECT_FALSE(nvlink_domain(c));
  const auto pairs = node_pairs(c);
  ASSERT_FALSE(pairs.empty());
  EXPECT_EQ(pairs[0].a, "gb-t01");
  EXPECT_EQ(pairs[0].b, "gb-t02");
  EXPECT_TRUE(pairs[0].nvlink_fallback);
  EXPECT_EQ(pairs[0].verdict,
            "NVLink domain fallback: hosts gb-t01 and gb-t02 are in one MNNVL communicator but connect over NET/IB; "
            "NET/IB with GPUDirect RDMA");
  for (std::size_t i = 1; i < pairs.size(); ++i) EXPECT_FALSE(pairs[i].nvlink_fallback) << pairs[i].a;
  const auto j = format_json(log, {"a.log"});
  EXPECT_TRUE(j.at("communicators").at(0).at("nvlink_domain").is_null());
  EXPECT_EQ(j.at("communicators").at(0).at("node_pairs").at(0).at("nvlink_fallback"), true);
}

// A host whose ranks say "MNNVL 0" (outside the clique) beside hosts on P2P/MNNVL: its pair on
// the network is flagged, whether the comm lines are in the log or filtered out
// (NCCL_DEBUG_SUBSYS=P2P,NET: only the channel lines say MNNVL). NCCL 2.28's line shapes, as above.
TEST(NcclLogReport, AHostOutsideTheCliqueBesideMnnvlPairsIsFlagged) {
  const std::string channels =
      "h1:1:9 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] via P2P/MNNVL\n"
      "h2:2:9 [0] NCCL INFO Channel 00/0 : 1[0] -> 2[0] [send] via NET/Socket/0\n"
      "h3:3:9 [0] NCCL INFO Channel 00/0 : 1[0] -> 2[0] [receive] via NET/Socket/0\n";
  const std::string comm_lines =
      "h1:1:1 [0] NCCL INFO ncclCommInitRankConfig comm 0x1 rank 0 nranks 3 cudaDev 0 commId 0x77 - Init START\n"
      "h2:2:2 [0] NCCL INFO ncclCommInitRankConfig comm 0x2 rank 1 nranks 3 cudaDev 0 commId 0x77 - Init START\n"
      "h3:3:3 [0] NCCL INFO ncclCommInitRankConfig comm 0x3 rank 2 nranks 3 cudaDev 0 commId 0x77 - Init START\n"
      "h1:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 3 nNodes 2 localRanks 2 localRank 0 MNNVL 1\n"
      "h2:2:2 [0] NCCL INFO comm 0x2 rank 1 nRanks 3 nNodes 2 localRanks 2 localRank 1 MNNVL 1\n"
      "h3:3:3 [0] NCCL INFO comm 0x3 rank 2 nRanks 3 nNodes 2 localRanks 1 localRank 0 MNNVL 0\n";
  for (const std::string& text : {comm_lines + channels, channels}) {
    const Communicator c = read_log(text).comms.at(0);
    bool flagged = false;
    for (const auto& p : node_pairs(c)) {
      if (p.a == "h2" && p.b == "h3") {
        flagged = p.nvlink_fallback;
        EXPECT_EQ(p.verdict.rfind("NVLink domain fallback: hosts h2 and h3 are in one MNNVL communicator but connect "
                                  "over NET/Socket;",
                                  0),
                  0u)
            << p.verdict;
      } else {
        EXPECT_FALSE(p.nvlink_fallback) << p.a << " " << p.b;
      }
    }
    EXPECT_TRUE(flagged) << text;
  }
}

// NCCL's two clique lines (src/init.cc fillInfo, src/mnnvl.cc; fixtures/nccl-log/README.md):
// "0xa" and "a" must read as one clique, or every rank would look alone.
TEST(NcclLogLine, CliqueLinesOfBothShapesNameOneClique) {
  const Line fill = parse_line(
      "0: nvl-a01:9000:9000 [0] NCCL INFO MNNVL busId 0x801000 fabric UUID 3f1a0c2e9b7d4411.8c2e5a7b1d3f6609 "
      "cliqueId 0xA state 3 healthMask 0x0 degradedBw false");
  ASSERT_TRUE(fill.clique);
  EXPECT_EQ(fill.clique->cluster_uuid, "3f1a0c2e9b7d4411.8c2e5a7b1d3f6609");
  EXPECT_EQ(fill.clique->clique_id, "a");
  const Line check = parse_line("0: nvl-a01:9000:9000 [0] NCCL INFO MNNVL 1 cliqueId a cliqueSize 8 cliqueRank 0");
  ASSERT_TRUE(check.clique);
  EXPECT_EQ(check.clique->cluster_uuid, "");
  EXPECT_EQ(check.clique->clique_id, "a");
  EXPECT_EQ(check.clique->clique_size, 8);
  // The comm line also says "MNNVL 1": it names no clique.
  EXPECT_FALSE(
      parse_line("h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 1").clique);
}

std::string without_lines_containing(const std::string& text, const std::string& what) {
  std::string out;
  for (const auto l : lines_of(text))
    if (l.find(what) == std::string_view::npos) out += std::string(l) + "\n";
  return out;
}

// Two NVL72-style racks (2 hosts x 4 GPUs each, cliques 0xa and 0xb) joined by InfiniBand on
// purpose: two NVLink domains, the network between them is no fallback.
TEST(NcclLogReport, TwoRacksJoinedByInfinibandAreTwoDomainsNotAFallback) {
  const Log log = read_log(fixture("mnnvl-two-racks-ib.log"));
  ASSERT_EQ(log.comms.size(), 1u);
  const Communicator& c = log.comms[0];
  EXPECT_TRUE(nvlink_cliques_logged(c));
  EXPECT_FALSE(nvlink_domain(c));  // not one domain
  const auto domains = nvlink_domains(c);
  ASSERT_EQ(domains.size(), 2u);
  EXPECT_EQ(domains[0].hosts, (std::vector<std::string>{"nvl-a01", "nvl-a02"}));
  EXPECT_EQ(domains[0].clique_id, "0xa");
  EXPECT_EQ(domains[0].cluster_uuid, "3f1a0c2e9b7d4411.8c2e5a7b1d3f6609");
  EXPECT_EQ(domains[0].gpus, 8);
  EXPECT_EQ(domains[1].hosts, (std::vector<std::string>{"nvl-b01", "nvl-b02"}));
  EXPECT_EQ(domains[1].clique_id, "0xb");
  EXPECT_EQ(domains[1].gpus, 8);
  std::size_t across = 0;
  for (const auto& p : node_pairs(c)) {
    EXPECT_FALSE(p.nvlink_fallback) << p.a << " " << p.b << ": " << p.verdict;
    const bool other_rack = p.a.substr(0, 5) != p.b.substr(0, 5);
    EXPECT_EQ(p.across_nvlink_domains, other_rack) << p.a << " " << p.b;
    if (!other_rack) continue;
    ++across;
    EXPECT_EQ(p.verdict, "two NVLink domains joined by the network: hosts " + p.a + " and " + p.b +
                             " are in different NVLink cliques (0xa, 0xb); NET/IB with GPUDirect RDMA");
  }
  EXPECT_EQ(across, 2u);  // the ring crosses between the racks twice: a02 -> b01, b02 -> a01
  const std::string text = format_text(log, {"mnnvl-two-racks-ib.log"});
  EXPECT_NE(
      text.find("  2 NVLink domains (MNNVL cliques) joined by the network:\n"
                "    clique 0xa (cluster UUID 3f1a0c2e9b7d4411.8c2e5a7b1d3f6609): hosts nvl-a01, nvl-a02 (8 GPUs)\n"
                "    clique 0xb (cluster UUID 7d4b21e0c9a83f52.1e6d0b9a4c7f2318): hosts nvl-b01, nvl-b02 (8 GPUs)\n"),
      std::string::npos)
      << text;
  EXPECT_EQ(text.find("fallback"), std::string::npos) << text;
  EXPECT_EQ(text.find("did not log"), std::string::npos) << text;
  const auto j = format_json(log, {"a.log"}).at("communicators").at(0);
  EXPECT_TRUE(j.at("nvlink_domain").is_null());
  ASSERT_EQ(j.at("nvlink_domains").size(), 2u);
  EXPECT_EQ(j.at("nvlink_domains").at(1).at("hosts"), (std::vector<std::string>{"nvl-b01", "nvl-b02"}));
  EXPECT_EQ(j.at("nvlink_domains").at(1).at("clique_id"), "0xb");
  EXPECT_EQ(j.at("nvlink_cliques_logged"), true);
  for (const auto& p : j.at("node_pairs")) EXPECT_EQ(p.at("nvlink_fallback"), false) << p.at("verdict");
}

// NCCL joins two GPUs only when the cluster UUID matches too (src/mnnvl.cc): racks whose
// cliques share an id but whose UUIDs differ are still two domains.
TEST(NcclLogReport, OneCliqueIdUnderTwoClusterUuidsIsTwoDomains) {
  std::string text = fixture("mnnvl-two-racks-ib.log");
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{{"cliqueId 0xa ", "cliqueId 0x7fff "},
                                                                                 {"cliqueId 0xb ", "cliqueId 0x7fff "},
                                                                                 {"cliqueId a ", "cliqueId 7fff "},
                                                                                 {"cliqueId b ", "cliqueId 7fff "}})
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at))
      text.replace(at, from.size(), to);
  ASSERT_EQ(text.find("cliqueId 0xa"), std::string::npos);
  const Communicator c = read_log(text).comms.at(0);
  EXPECT_EQ(nvlink_domains(c).size(), 2u);
  for (const auto& p : node_pairs(c)) EXPECT_FALSE(p.nvlink_fallback) << p.a << " " << p.b << ": " << p.verdict;
}

// mnnvl-ib-fallback.log: every rank logs clique 0x7ffe, yet the hosts connect over NET/IB.
TEST(NcclLogReport, HostsOfOneCliqueOnTheNetworkAreStillAFallback) {
  const Log log = read_log(fixture("mnnvl-ib-fallback.log"));
  const Communicator& c = log.comms.at(0);
  EXPECT_TRUE(nvlink_cliques_logged(c));
  const auto domains = nvlink_domains(c);
  ASSERT_EQ(domains.size(), 1u);
  EXPECT_EQ(domains[0].clique_id, "0x7ffe");
  EXPECT_EQ(domains[0].hosts, (std::vector<std::string>{"gb-t01", "gb-t02"}));
  std::size_t flagged = 0;
  for (const auto& p : node_pairs(c)) {
    EXPECT_FALSE(p.across_nvlink_domains) << p.a << " " << p.b;
    flagged += p.nvlink_fallback;
  }
  EXPECT_EQ(flagged, 1u);
  const std::string text = format_text(log, {"mnnvl-ib-fallback.log"});
  EXPECT_NE(text.find("  one NVLink domain (MNNVL), some of whose hosts connect over the network:\n"
                      "    clique 0x7ffe: hosts gb-t01, gb-t02 (8 GPUs)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("did not log"), std::string::npos) << text;  // the cliques say it is a fallback
}

// The same log cut of its clique lines (an older NCCL, NCCL_DEBUG_SUBSYS without INIT): the
// verdict stays a fallback, and the report says it cannot tell it from two racks.
TEST(NcclLogReport, WithoutCliqueLinesTheFallbackStandsAndTheReportSaysWhy) {
  const Log log = read_log(without_lines_containing(fixture("mnnvl-ib-fallback.log"), "cliqueId"));
  const Communicator& c = log.comms.at(0);
  EXPECT_FALSE(nvlink_cliques_logged(c));
  const auto pairs = node_pairs(c);
  ASSERT_FALSE(pairs.empty());
  EXPECT_TRUE(pairs[0].nvlink_fallback);
  EXPECT_FALSE(pairs[0].across_nvlink_domains);
  EXPECT_EQ(pairs[0].verdict.rfind("NVLink domain fallback: hosts gb-t01 and gb-t02 are in one MNNVL communicator", 0),
            0u)
      << pairs[0].verdict;
  const std::string text = format_text(log, {"a.log"});
  EXPECT_NE(text.find("note: NCCL did not log the NVLink clique of these ranks"), std::string::npos) << text;
  EXPECT_NE(text.find("cannot be told from two domains (racks) joined by the network on purpose"), std::string::npos)
      << text;
  EXPECT_EQ(format_json(log, {"a.log"}).at("communicators").at(0).at("nvlink_cliques_logged"), false);
}

// src/init.cc fillInfo's fabric fields (fixtures/nccl-log/README.md): each read when present, and
// unknown, not healthy, when the line lacks it (an older NCCL, src/mnnvl.cc's line).
void expect_fabric_health(const std::string& line, int state, unsigned health_mask, const std::string& degraded_bw) {
  const Line read = parse_line(line);
  ASSERT_TRUE(read.clique) << line;
  EXPECT_EQ(read.clique->health.state, state) << line;
  EXPECT_EQ(read.clique->health.health_mask, health_mask) << line;
  EXPECT_EQ(read.clique->health.degraded_bw, degraded_bw) << line;
}

TEST(NcclLogLine, FabricStateHealthMaskAndDegradedBwAreRead) {
  expect_fabric_health(
      "9: nvl-b01:9201:9201 [1] NCCL INFO MNNVL busId 0x901000 fabric UUID 7d4b21e0c9a83f52.1e6d0b9a4c7f2318 "
      "cliqueId 0xb state 3 healthMask 0x1 degradedBw true",
      3, 0x1u, "true");
  expect_fabric_health(
      "3: nvl-a01:9003:9003 [3] NCCL INFO MNNVL busId 0x1901000 fabric UUID 3f1a.8c2e cliqueId 0xa state 2 "
      "healthMask 0x1A0",
      2, 0x1a0u, "");
  const Line check = parse_line("0: nvl-a01:9000:9000 [0] NCCL INFO MNNVL 1 cliqueId a cliqueSize 8 cliqueRank 0");
  ASSERT_TRUE(check.clique);
  EXPECT_FALSE(check.clique->health.logged());
  EXPECT_FALSE(check.clique->health.state);
  EXPECT_FALSE(check.clique->health.health_mask);
}

// NVML's mask holds fields, not fault bits: "false" is 2 in each, so a healthy GPU's mask is not zero.
TEST(NcclLogReport, HealthMaskFaultsFollowNvmlFields) {
  EXPECT_TRUE(health_mask_faults(0x0).empty());    // nothing supported
  EXPECT_TRUE(health_mask_faults(0x2).empty());    // bandwidth not degraded
  EXPECT_TRUE(health_mask_faults(0x1aa).empty());  // every field false, configuration "none"
  EXPECT_EQ(health_mask_faults(0x1), (std::vector<std::string>{"bandwidth degraded"}));
  EXPECT_EQ(health_mask_faults(0x2 | (1u << 4) | (5u << 8)),
            (std::vector<std::string>{"route unhealthy", "incorrect configuration: insufficient NVLinks"}));
  EXPECT_EQ(health_mask_faults((1u << 2) | (1u << 6)),
            (std::vector<std::string>{"route recovery in progress", "access timeout recovery in progress"}));
}

// mnnvl-fabric-unhealthy.log: rank 3's fabric is still in progress (so NCCL kept MNNVL off for the
// whole communicator) and rank 9 reports degraded bandwidth.
TEST(NcclLogReport, RanksWithAnUnhealthyFabricAreFlagged) {
  const Log log = read_log(fixture("mnnvl-fabric-unhealthy.log"));
  ASSERT_EQ(log.comms.size(), 1u);
  const Communicator& c = log.comms[0];
  EXPECT_TRUE(nvlink_fabric_health_logged(c));
  const auto flagged = nvlink_fabric_unhealthy_ranks(c);
  ASSERT_EQ(flagged.size(), 2u);
  EXPECT_EQ(flagged[0].rank, 3);
  EXPECT_EQ(flagged[0].problems, (std::vector<std::string>{"fabric state 2 (in progress), not completed"}));
  EXPECT_EQ(flagged[1].rank, 9);
  EXPECT_EQ(flagged[1].problems, (std::vector<std::string>{"healthMask 0x1: bandwidth degraded", "degradedBw true"}));
  const std::string text = format_text(log, {"mnnvl-fabric-unhealthy.log"});
  EXPECT_NE(text.find("  NVLink fabric not healthy on 2 ranks (may have fallen back from MNNVL or run at reduced "
                      "NVLink bandwidth):\n"
                      "    rank 3 (nvl-a01 GPU 3) busId 1901000: fabric state 2 (in progress), not completed\n"
                      "    rank 9 (nvl-b01 GPU 1) busId 901000: healthMask 0x1: bandwidth degraded; degradedBw true\n"),
            std::string::npos)
      << text;
  const auto j = format_json(log, {"a.log"}).at("communicators").at(0);
  EXPECT_EQ(j.at("nvlink_fabric_health_logged"), true);
  const auto& ranks = j.at("nvlink_fabric_unhealthy_ranks");
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks.at(0).at("rank"), 3);
  EXPECT_EQ(ranks.at(0).at("host"), "nvl-a01");
  EXPECT_EQ(ranks.at(0).at("bus_id"), "1901000");
  EXPECT_EQ(ranks.at(0).at("fabric_state"), 2);
  EXPECT_EQ(ranks.at(0).at("health_mask"), "0x0");
  EXPECT_EQ(ranks.at(0).at("degraded_bw"), "not-supported");
  EXPECT_EQ(ranks.at(1).at("rank"), 9);
  EXPECT_EQ(ranks.at(1).at("fabric_state"), 3);
  EXPECT_EQ(ranks.at(1).at("health_mask"), "0x1");
  EXPECT_EQ(ranks.at(1).at("degraded_bw"), "true");
}

// A healthy log says nothing of the fabric; one without the fields is unknown, not healthy.
TEST(NcclLogReport, AHealthyFabricIsNotMentionedAndAnUnloggedOneIsUnknown) {
  const Log healthy = read_log(fixture("mnnvl-two-racks-ib.log"));
  EXPECT_TRUE(nvlink_fabric_health_logged(healthy.comms.at(0)));
  EXPECT_TRUE(nvlink_fabric_unhealthy_ranks(healthy.comms.at(0)).empty());
  EXPECT_EQ(format_text(healthy, {"a.log"}).find("NVLink fabric"), std::string::npos);  // not "# fabricbench"
  EXPECT_TRUE(format_json(healthy, {"a.log"}).at("communicators").at(0).at("nvlink_fabric_unhealthy_ranks").empty());
  const Log unlogged = read_log(fixture("mnnvl-one-domain.log"));
  EXPECT_FALSE(nvlink_fabric_health_logged(unlogged.comms.at(0)));
  EXPECT_EQ(format_json(unlogged, {"a.log"}).at("communicators").at(0).at("nvlink_fabric_health_logged"), false);
}

TEST(NcclLogReport, AnOrdinaryInfinibandJobIsNoDomainAndNoFallback) {
  const Log log = read_log(fixture("two-nodes-ib-gdr.log"));
  const auto j = format_json(log, {"a.log"});
  const auto& c = j["communicators"][0];
  ASSERT_TRUE(c.contains("nvlink_domain"));
  EXPECT_TRUE(c["nvlink_domain"].is_null());
  for (const auto& p : c["node_pairs"]) {
    ASSERT_TRUE(p.contains("nvlink_fallback"));
    EXPECT_EQ(p["nvlink_fallback"], false) << p["verdict"];
    EXPECT_EQ(p["verdict"].get<std::string>().find("NVLink domain"), std::string::npos) << p["verdict"];
  }
  EXPECT_EQ(format_text(log, {"a.log"}).find("NVLink domain"), std::string::npos);
}

TEST(NcclLogCli, AFlaggedFallbackKeepsExitCodeZero) {
  // The command reports; no verdict changes its exit code (report_nccl_log.cpp), the fallback neither.
  const auto r =
      test::run_process(std::string(FB_BINARY) + " report nccl-log " + fixture_path("mnnvl-ib-fallback.log"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("gb-t01 <-> gb-t02: NVLink domain fallback: hosts gb-t01 and gb-t02"), std::string::npos)
      << r.out;
}

TEST(NcclLogCli, TwoRacksReadAsTwoDomains) {
  const auto r =
      test::run_process(std::string(FB_BINARY) + " report nccl-log " + fixture_path("mnnvl-two-racks-ib.log"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2 NVLink domains (MNNVL cliques) joined by the network"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nvl-a02 <-> nvl-b01: two NVLink domains joined by the network"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("fallback"), std::string::npos) << r.out;
}

TEST(NcclLogCli, UnhealthyFabricRanksAreNamedAndAHealthyLogIsQuiet) {
  const auto r =
      test::run_process(std::string(FB_BINARY) + " report nccl-log " + fixture_path("mnnvl-fabric-unhealthy.log"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("NVLink fabric not healthy on 2 ranks"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rank 3 (nvl-a01 GPU 3) busId 1901000: fabric state 2 (in progress), not completed"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("rank 9 (nvl-b01 GPU 1) busId 901000: healthMask 0x1: bandwidth degraded; degradedBw true"),
            std::string::npos)
      << r.out;
  const auto json = test::run_process(std::string(FB_BINARY) + " report nccl-log --format json " +
                                      fixture_path("mnnvl-fabric-unhealthy.log"));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto ranks = nlohmann::json::parse(json.out)["communicators"][0]["nvlink_fabric_unhealthy_ranks"];
  ASSERT_EQ(ranks.size(), 2u) << json.out;
  EXPECT_EQ(ranks[0]["rank"], 3);
  EXPECT_EQ(ranks[1]["rank"], 9);
  const auto healthy =
      test::run_process(std::string(FB_BINARY) + " report nccl-log " + fixture_path("mnnvl-two-racks-ib.log"));
  ASSERT_EQ(healthy.exit_code, 0) << healthy.err;
  EXPECT_EQ(healthy.out.find("fabric not healthy"), std::string::npos) << healthy.out;
}

TEST(NcclLogCli, TextReportOfSeveralFiles) {
  const auto r = test::run_process(std::string(FB_BINARY) + " report nccl-log " + fixture_path("two-nodes-ib-gdr.log") +
                                   " " + fixture_path("two-nodes-socket.log"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("communicator 0x7f3e2a9c11d04b21: 4 ranks on 2 nodes; NCCL 2.28.9+cuda13.0; network IB"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("gpu-a01 <-> gpu-a02: NET/IB with GPUDirect RDMA"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("node1 <-> node2: inter-node traffic on NET/Socket: TCP fallback"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 (gpu-a01 GPU 0) -> 1 (gpu-a01 GPU 1): P2P/CUMEM [0-1]"), std::string::npos) << r.out;
}

TEST(NcclLogCli, JsonFormat) {
  const auto r =
      test::run_process(std::string(FB_BINARY) + " report nccl-log --format json " + fixture_path("nvls-tuning.log"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["communicators"][0]["nvls_channels"], 16);
}

TEST(NcclLogCli, AFileWithoutNcclLinesExitsTwo) {
  const std::string file = std::string(FB_SOURCE_DIR) + "/tests/backends/fixtures/nccl-log/README.md";
  const auto r = test::run_process(std::string(FB_BINARY) + " report nccl-log " + file);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no NCCL lines"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("NCCL_DEBUG=INFO"), std::string::npos) << r.err;
  const auto missing = test::run_process(std::string(FB_BINARY) + " report nccl-log /nonexistent/x.log");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("'/nonexistent/x.log': cannot read it: No such file"), std::string::npos) << missing.err;
  const auto fmt = test::run_process(std::string(FB_BINARY) + " report nccl-log --format csv " + file);
  EXPECT_EQ(fmt.exit_code, 2);
}

}  // namespace
}  // namespace fb::nccl_log
