// The one text-table renderer (core/text_table.hpp): widths, alignment,
// clipping, prefixes, notes, and the short and empty cases.
#include "fabricbench/core/text_table.hpp"

#include <gtest/gtest.h>

namespace fb {
namespace {

TextTable two_columns() {
  TextTable t;
  t.columns = {{.head = "name"}, {.head = "busbw", .align = Align::right}};
  return t;
}

TEST(TextTable, TheWidestCellSetsTheColumnWidthAndFiguresAlignRight) {
  TextTable t = two_columns();
  t.add_row({"all_reduce", "1.5"});
  t.add_row({"bcast", "123.25"});
  EXPECT_EQ(render(t),
            "name         busbw\n"
            "all_reduce     1.5\n"
            "bcast       123.25\n");
  EXPECT_EQ(column_widths(t), (std::vector<std::size_t>{10, 6}));
}

TEST(TextTable, TheHeadWidensAColumnOfShortCells) {
  TextTable t = two_columns();
  t.add_row({"a", "1"});
  EXPECT_EQ(render(t),
            "name  busbw\n"
            "a         1\n");
}

TEST(TextTable, AlignmentIsPerColumn) {
  TextTable t = two_columns();
  t.columns[0].align = Align::right;
  t.columns[1].align = Align::left;
  t.add_row({"ab", "1"});
  t.add_row({"abcdef", "22"});
  EXPECT_EQ(render(t),
            "  name  busbw\n"
            "    ab  1\n"
            "abcdef  22\n");
}

TEST(TextTable, MinWidthKeepsAFixedLayout) {
  TextTable t = two_columns();
  t.columns[0].min_width = 8;
  t.columns[1].min_width = 7;
  t.add_row({"x", "2"});
  EXPECT_EQ(render(t),
            "name        busbw\n"
            "x               2\n");
}

TEST(TextTable, AClippedColumnEndsItsLongCellsWithTheMark) {
  TextTable t = two_columns();
  t.columns[0].max_width = 8;
  t.add_row({"reduce_scatter", "1"});
  t.add_row({"gather", "2"});
  EXPECT_EQ(render(t),
            "name      busbw\n"
            "reduc...      1\n"
            "gather        2\n");
}

TEST(TextTable, AnEmptyClipMarkCutsBare) {
  TextColumn c{.head = "host", .max_width = 4, .clip_mark = ""};
  EXPECT_EQ(clip(c, "node-long"), "node");
  EXPECT_EQ(clip(c, "n1"), "n1");
  c.clip_mark = "...";
  EXPECT_EQ(clip(c, "node-long"), "n...");
}

TEST(TextTable, PrefixesAndGapsAreTheCallers) {
  TextTable t = two_columns();
  t.head_prefix = "# ";
  t.row_prefix = "  ";
  t.columns[1].gap = " | ";
  t.add_row({"ab", "1"});
  EXPECT_EQ(render(t),
            "# name | busbw\n"
            "  ab   |     1\n");
}

TEST(TextTable, NotesComeUnderTheTableAfterTheirPrefix) {
  TextTable t = two_columns();
  t.add_row({"a", "1"});
  t.notes = {"first", "second"};
  EXPECT_EQ(render(t),
            "name  busbw\n"
            "a         1\n"
            "# first\n"
            "# second\n");
  t.note_prefix = "  ";
  EXPECT_EQ(render(t),
            "name  busbw\n"
            "a         1\n"
            "  first\n"
            "  second\n");
}

TEST(TextTable, AnEmptyTablePrintsItsHeadOnly) {
  TextTable t = two_columns();
  EXPECT_EQ(render(t), "name  busbw\n");
}

TEST(TextTable, AShortRowEndsAfterItsLastCellAndKeepsItsTail) {
  TextTable t;
  t.columns = {{.head = "node"}, {.head = "verdict"}, {.head = "sm%", .align = Align::right}};
  t.add_row({"0", "busy", "97"});
  t.add_row({"0", "idle"}, " NIC mlx5_0 3% of its peak;");
  t.add_row({"1"});
  EXPECT_EQ(render(t),
            "node  verdict  sm%\n"
            "0     busy      97\n"
            "0     idle    NIC mlx5_0 3% of its peak;\n"
            "1\n");
}

TEST(TextTable, CellsPastTheLastColumnAreLeftOut) {
  TextTable t = two_columns();
  t.add_row({"a", "1", "surplus"});
  EXPECT_EQ(render(t),
            "name  busbw\n"
            "a         1\n");
}

TEST(TextTable, AStreamedRowLinesUpWithItsHeadByMinWidthAlone) {
  const std::vector<TextColumn> columns = {{.head = "target", .align = Align::right, .min_width = 4, .gap = " "},
                                           {.head = "GB/s", .align = Align::right, .min_width = 8, .gap = " "}};
  EXPECT_EQ(render_head_line(columns, "#"), "#target     GB/s\n");
  EXPECT_EQ(render_row_line(columns, " ", {"nfs", "1.25"}), "    nfs     1.25\n");
}

}  // namespace
}  // namespace fb
