// The storage table streams a row per pattern as it finishes: fixed widths,
// so every row stands under the head printed before any row was measured.
#include "fabricbench/storage/report.hpp"

#include <gtest/gtest.h>

namespace fb::storage {
namespace {

TEST(StorageTable, AStreamedRowStandsUnderTheHead) {
  StorageLine l;
  l.target = "data";
  l.pattern = "seq-read";
  l.mode = "direct";
  l.cache = "cold";
  l.block_bytes = 1 << 20;
  l.file_bytes = 1ull << 30;
  l.nodes = 2;
  l.ranks = 16;
  l.aggregate_gbps = 12.5;
  l.node_min_gbps = 5.25;
  l.iops = 1600;
  l.latency_p50_us = 120;
  l.latency_p99_us = 900;
  l.latency_max_us = 1500;
  EXPECT_EQ(table_header(),
            "#target      pattern      mode  block   file     cache  nodes  ranks   agg GB/s   node min       IOPS     "
            "p50 us     p99 us     max us\n");
  EXPECT_EQ(table_row(l),
            "   data     seq-read    direct     1M     1G      cold      2     16       12.5      5.250       1600     "
            "   120        900       1500\n");
}

}  // namespace
}  // namespace fb::storage
