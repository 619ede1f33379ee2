// Path provenance from NCCL's debug output. The lines follow the shapes NCCL
// 2.x prints (as seen in public NCCL bug reports, e.g. NVIDIA/nccl#1189 for
// P2P/CUMEM with NET/IB/GDRDMA and the Pattern line, nccl-tests#166 for
// SHM/direct and NET/Socket, NVIDIA/nccl#1358 for P2P/direct pointer);
// host names, pids and ranks here are made up.
#include "nccl/nccl_log.hpp"

#include <gtest/gtest.h>

#include "nccl/nccl_debug.hpp"

namespace fb {
namespace {

TEST(NcclLog, NvlinkNodeWithInfiniBandAndGpuDirect) {
  const char* log =
      "NCCL version 2.28.3+cuda13.0\n"
      "gpu-a01:4101:4188 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/IB ; OOB bond0:10.1.0.7<0>\n"
      "gpu-a01:4101:4188 [0] NCCL INFO Using network IB\n"
      "gpu-a01:4101:4188 [0] NCCL INFO Pattern 4, crossNic 0, nChannels 16, bw 40.000000/40.000000, type NVL/PIX, "
      "sameChannels 1\n"
      "gpu-a01:4101:4190 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
      "gpu-a01:4101:4190 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
      "gpu-a01:4101:4190 [0] NCCL INFO Channel 02/0 : 8[0] -> 0[0] [receive] via NET/IB/0/GDRDMA\n"
      "gpu-a01:4101:4190 [0] NCCL INFO Channel 03/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n"
      "gpu-a01:4101:4188 [0] NCCL INFO comm 0x5612 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n";
  const NcclLogFacts f = parse_nccl_log(log);
  EXPECT_EQ(f.version, "2.28.3+cuda13.0");
  EXPECT_EQ(f.network, "IB");
  EXPECT_EQ(f.transports, (std::set<std::string>{"P2P/CUMEM", "NET/IB/GDRDMA"}));
  EXPECT_EQ(describe_nccl_path(f, 16), "P2P/CUMEM/NVLink+NET/IB/GDRDMA");
}

TEST(NcclLog, APairsRowNamesOnlyTheConnectionsBetweenItsRanks) {
  // Issue 34, defect 9: a pingpong 0<->8 after the collectives read
  // "P2P/CUMEM/NVLink+NET/IB/GDRDMA", the union of every connection the
  // communicator had made; its own traffic went over the network only.
  const char* log =
      "gpu-a01:4101:4188 [0] NCCL INFO Pattern 4, crossNic 0, nChannels 16, bw 40.000000/40.000000, type NVL/PIX, "
      "sameChannels 1\n"
      "gpu-a01:4101:4190 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
      "gpu-a01:4101:4190 [0] NCCL INFO Channel 00/1 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n"
      "gpu-a01:4101:4190 [0] NCCL INFO Channel 01/1 : 8[0] -> 0[0] [receive] via NET/IB/0/GDRDMA\n";
  EXPECT_EQ(describe_nccl_path(parse_nccl_log(log), 16), "P2P/CUMEM/NVLink+NET/IB/GDRDMA");
  EXPECT_EQ(describe_nccl_path(parse_nccl_log(log, 0, 8), 16, Op::pingpong), "NET/IB/GDRDMA");
  EXPECT_EQ(describe_nccl_path(parse_nccl_log(log, 8, 0), 16, Op::pingpong), "NET/IB/GDRDMA");
  EXPECT_EQ(describe_nccl_path(parse_nccl_log(log, 0, 1), 16, Op::pingpong), "P2P/CUMEM/NVLink");
  EXPECT_EQ(describe_nccl_path(parse_nccl_log(log, 1, 8), 16, Op::pingpong), "unknown");
}

TEST(NcclLog, PcieNodeWithIpcAndNoGpuDirect) {
  const char* log =
      "[2026-11-29 10:04:05] n3:77:91 [1] NCCL INFO Pattern 4, crossNic 0, nChannels 2, bw 12.000000/6.000000, "
      "type PHB/PHB, sameChannels 1\n"
      "n3:77:91 [1] NCCL INFO Channel 00/0 : 1[1] -> 2[2] via P2P/IPC\n"
      "n3:77:91 [1] NCCL INFO Channel 01/0 : 5[1] -> 1[1] [receive] via NET/IB/1\n";
  EXPECT_EQ(describe_nccl_path(parse_nccl_log(log), 8), "P2P/IPC/PCIe+NET/IB");
}

TEST(NcclLog, SharedMemoryAndSockets) {
  const char* log =
      "ubuntu:9621:9688 [3] NCCL INFO Channel 05 : 11[3] -> 12[4] via SHM/direct/direct\n"
      "ubuntu:9621:9692 [7] NCCL INFO Channel 14/0 : 15[7] -> 0[0] [send] via NET/Socket/0\n"
      "ubuntu:9621:9692 [7] NCCL INFO Using network Socket\n";
  const NcclLogFacts f = parse_nccl_log(log);
  EXPECT_EQ(f.network, "Socket");
  EXPECT_EQ(describe_nccl_path(f, 16), "SHM+NET/Socket");
}

TEST(NcclLog, OneProcessManyGpusUsesDirectPointers) {
  const char* log = "h:106:121 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/direct pointer\n"
                    "h:106:121 [1] NCCL INFO Pattern 4, crossNic 0, nChannels 2, bw 20.0/20.0, type NVB/PIX, "
                    "sameChannels 1\n";
  EXPECT_EQ(describe_nccl_path(parse_nccl_log(log), 2), "P2P/direct/NVLink");
}

TEST(NcclLog, NothingSaidMeansLocalForOneRankAndUnknownOtherwise) {
  const char* log = "h200:5:5 [0] NCCL INFO Bootstrap: Using eth0:10.0.0.2<0>\n"
                    "h200:5:9 [0] NCCL INFO comm 0x1 rank 0 nRanks 1 nNodes 1 localRanks 1 localRank 0 MNNVL 0\n";
  const NcclLogFacts f = parse_nccl_log(log);
  EXPECT_TRUE(f.transports.empty());
  EXPECT_EQ(describe_nccl_path(f, 1), "local");
  EXPECT_EQ(describe_nccl_path(f, 2), "unknown");
  EXPECT_EQ(describe_nccl_path(parse_nccl_log(""), 1), "local");
}

TEST(NcclLog, TransportWithoutTopologyLinesHasNoLinkSuffix) {
  EXPECT_EQ(describe_nccl_path(parse_nccl_log("x:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\n"), 2),
            "P2P/CUMEM");
}

TEST(NcclLog, NvlsAndCollNetShowForTheCollectivesTheyServe) {
  // NVLS prints no "via" line: without this an NVLS all_reduce read as P2P only.
  const char* log =
      "h1:10:10 [0] NCCL INFO 24 coll channels, 24 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p "
      "channels per peer\n"
      "h1:10:40 [0] NCCL INFO Channel 00/1 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
      "h1:10:40 [0] NCCL INFO CollNet 00/0 : 0 [send] via COLLNET/SHARP/0/GDRDMA\n";
  const NcclLogFacts f = parse_nccl_log(log);
  EXPECT_EQ(f.nvls_channels, 16);
  EXPECT_TRUE(f.collnet);
  EXPECT_EQ(describe_nccl_path(f, 8, Op::all_reduce), "P2P/CUMEM+NVLS+CollNet");
  EXPECT_EQ(describe_nccl_path(f, 8, Op::reduce_scatter), "P2P/CUMEM+NVLS+CollNet");
  EXPECT_EQ(describe_nccl_path(f, 8, Op::sendrecv), "P2P/CUMEM");  // NVLS carries no point-to-point
  EXPECT_EQ(describe_nccl_path(f, 8, Op::broadcast), "P2P/CUMEM");
}

TEST(NcclLog, TuningLinesNameTheAlgorithmOfTheRowsOp) {
  const char* log =
      "h1:10:40 [0] NCCL INFO Channel 00/1 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
      "h1:10:10 [0] NCCL INFO AllReduce: 8 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}\n"
      "h1:10:10 [0] NCCL INFO AllReduce: 268435456 Bytes -> Algo NVLS proto SIMPLE channel{Lo..Hi}={0..15}\n"
      "h1:10:10 [0] NCCL INFO AllGather: 4096 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..1}\n";
  const NcclLogFacts f = parse_nccl_log(log);
  EXPECT_EQ(describe_nccl_path(f, 2, Op::all_reduce), "P2P/CUMEM algo NVLS/SIMPLE;RING/LL");
  EXPECT_EQ(describe_nccl_path(f, 2, Op::all_gather), "P2P/CUMEM algo RING/LL128");
  EXPECT_EQ(describe_nccl_path(f, 2, Op::alltoall), "P2P/CUMEM");
}

TEST(NcclLog, NetSpellingsTheOldParserMissed) {
  const char* log =
      "[1,0]<stdout>:a:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0(1)/GDRDMA\n"
      "[1,0]<stdout>:a:1:2 [0] NCCL INFO Channel 01/0 : 0[0] -> 8[0] [send] via NET/AWS Libfabric/0/GDRDMA\n"
      "[1,0]<stdout>:a:1:2 [0] NCCL INFO Channel 02/0 : 0[0] -> 8[0] [send] via NET/IB/1/GDRDMA(PCI)/Shared\n"
      "[1,0]<stdout>:a:1:2 [0] NCCL INFO Channel 03/0 : 0[0] -> 2[2] via P2P/indirect/1[1]\n"
      "[1,0]<stdout>:a:1:2 [0] NCCL INFO Ring 00 : 0[0] -> 3[3] via P2P/IPC\n";
  EXPECT_EQ(parse_nccl_log(log).transports,
            (std::set<std::string>{"NET/IB/GDRDMA/PXN", "NET/AWS_Libfabric/GDRDMA", "NET/IB/GDRDMA(PCI)", "P2P/indirect",
                                   "P2P/IPC"}));
}

TEST(NcclLog, EveryMembersPathIsMerged) {
  // World rank 0 connects only inside its node; rank 8 sees the network: the row names both.
  EXPECT_EQ(merge_nccl_paths({"P2P/CUMEM/NVLink", "P2P/CUMEM/NVLink+NET/IB/GDRDMA", "unknown"}),
            "P2P/CUMEM/NVLink+NET/IB/GDRDMA");
  EXPECT_EQ(merge_nccl_paths({"SHM+NVLS algo NVLS/SIMPLE", "NET/Socket"}), "SHM+NET/Socket+NVLS algo NVLS/SIMPLE");
  EXPECT_EQ(merge_nccl_paths({"unknown", "unknown"}), "unknown");
  EXPECT_EQ(merge_nccl_paths({"local"}), "local");
}

TEST(NcclLog, PinnedAlgorithmAndProtocolStayOneCsvField) {
  EXPECT_EQ(pinned_tuning(nullptr, nullptr), "");
  EXPECT_EQ(pinned_tuning("Ring", ""), " NCCL_ALGO=Ring");
  EXPECT_EQ(pinned_tuning("^NVLS,Tree", "Simple"), " NCCL_ALGO=^NVLS;Tree NCCL_PROTO=Simple");
}

TEST(NcclDebug, UnsetSettingsGetInfoWithInitAndGraphSilently) {
  const NcclDebugSettings s = nccl_debug_settings(nullptr, nullptr);
  EXPECT_EQ(s.level, "INFO");
  EXPECT_EQ(s.subsys, "INIT,ENV,GRAPH");
  EXPECT_TRUE(s.notes.empty());
  EXPECT_TRUE(nccl_debug_settings("trace", "ALL").notes.empty());  // NCCL compares without case
}

TEST(NcclDebug, ARaisedLevelIsSaid) {
  const NcclDebugSettings s = nccl_debug_settings("WARN", nullptr);
  EXPECT_EQ(s.level, "INFO");
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("NCCL_DEBUG=WARN raised to INFO"), std::string::npos);
}

TEST(NcclDebug, ASubsystemListWithoutInitIsExtendedAndSaid) {
  const NcclDebugSettings s = nccl_debug_settings("INFO", "NET,TUNING");
  EXPECT_EQ(s.subsys, "NET,TUNING,INIT,GRAPH");
  EXPECT_FALSE(s.hides_transports);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("NCCL_DEBUG_SUBSYS=NET,TUNING extended to NET,TUNING,INIT,GRAPH"), std::string::npos);
  EXPECT_TRUE(nccl_debug_settings("INFO", "init,graph,tuning").notes.empty());
}

TEST(NcclDebug, AnExcludedInitIsKeptAndMakesPathsUnknownSayingWhy) {
  const NcclDebugSettings s = nccl_debug_settings("INFO", "^INIT,ENV");
  EXPECT_EQ(s.subsys, "^INIT,ENV");
  EXPECT_TRUE(s.hides_transports);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("hides the INIT lines"), std::string::npos);
  EXPECT_FALSE(nccl_debug_settings("INFO", "^COLL").hides_transports);
}

TEST(NcclLog, DebugFilePatternExpandsAsNcclDoes) {
  EXPECT_EQ(expand_nccl_debug_file("/tmp/nccl.%h.%p.log", "node7.cluster.local", 4242), "/tmp/nccl.node7.4242.log");
  EXPECT_EQ(expand_nccl_debug_file("a%%b%qc%", "h", 1), "a%b%qc%");
}

}  // namespace
}  // namespace fb
