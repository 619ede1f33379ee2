// The model's tables as text: heads with their units spelt out, a column of
// figures (and "-", "inf") right-aligned, names left, notes under "# ".
#include "fabricbench/model/table.hpp"

#include <gtest/gtest.h>

namespace fb::model {
namespace {

TEST(ModelTable, UnitsInTheHeadFiguresRightNamesLeft) {
  Table t;
  t.header = {"network", "line_gbit", "step_s", "comm_pct"};
  t.rows = {{"ethernet", "10", "1.250", "inf"}, {"infiniband", "400", "-", "3.5"}};
  t.notes = {"figures from presets"};
  EXPECT_EQ(render_text(t),
            "network     line (Gbit/s)  step (s)  comm (%)\n"
            "ethernet               10     1.250       inf\n"
            "infiniband            400         -       3.5\n"
            "# figures from presets\n");
  EXPECT_EQ(render_csv(t), "network,line_gbit,step_s,comm_pct\nethernet,10,1.250,inf\ninfiniband,400,-,3.5\n");
}

TEST(ModelTable, AColumnWithOneNameInItIsLeftAligned) {
  Table t;
  t.header = {"basis", "gpus"};
  t.rows = {{"measured", "8"}, {"preset", "many"}};
  EXPECT_EQ(render_text(t),
            "basis     gpus\n"
            "measured  8\n"
            "preset    many\n");
}

TEST(ModelTable, NamesThatStartWithANumberAreNamesNotFigures) {
  // "10GbE" read as the number 10 once right-aligned the whole network column.
  Table t;
  t.header = {"network", "comm_pct", "speedup"};
  t.rows = {{"10GbE", "41.5", "1.0x"}, {"400G IB", "3.5", "2.4x"}};
  EXPECT_EQ(render_text(t),
            "network  comm (%)  speedup\n"
            "10GbE        41.5     1.0x\n"
            "400G IB       3.5     2.4x\n");
}

}  // namespace
}  // namespace fb::model
