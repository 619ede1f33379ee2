// The page's sections, one renderer per file (section_*.cpp), and what they
// share. Each returns "" when its inputs hold nothing to show.
#pragma once

#include <string>
#include <vector>

#include "fabricbench/report/html.hpp"

namespace fb::report::section {

struct Section {
  std::string id;     // the anchor: "verdict", "curves", ...
  std::string title;  // for the table of contents
  std::string html;   // the whole <section>, "" = left out
};

Section verdict(const HtmlInputs& in);   // section_check.cpp
Section quotes(const HtmlInputs& in);    // section_model.cpp
Section overview(const HtmlInputs& in);  // section_overview.cpp
Section compare(const HtmlInputs& in);   // section_compare.cpp
Section curves(const HtmlInputs& in);    // section_curves.cpp
Section pairs(const HtmlInputs& in);     // section_pairs.cpp
Section health(const HtmlInputs& in);    // section_health.cpp

// ---- shared (section_common.cpp) ------------------------------------------

// Okabe and Ito's colour-blind safe palette (2008), yellow left out (faint on white).
const std::string& colour(std::size_t i);
// "A" or, with one record, "": what a series' label starts with.
std::string record_prefix(const RecordInput& r, const HtmlInputs& in);
// "vm, 1 rank, nccl 2.28.3, run 2026-11-30T01:40:36Z" and the like: what a record is, in words.
std::string record_identity(const Results& r);
// The record's host of a world rank ("" when the header does not say).
[[nodiscard]] std::string host_of(const Results& r, int rank);
// A table row: cells already HTML (escaped text or markup), and the <tr>'s
// own attributes (' data-rule="x"').
struct Row {
  std::vector<std::string> cells;
  std::string attrs;
};
// Heads are text (escaped here); numeric columns right-aligned by class "n".
std::string table(const std::vector<std::string>& heads, const std::vector<Row>& rows, const std::string& cls = "");
// <section id=..><h2>..</h2> ... </section>
std::string wrap(const std::string& id, const std::string& title, const std::string& body,
                 const std::string& attrs = "");
// An element id unique in the page: "c17". reset_ids() starts a page.
std::string next_id(const char* prefix);
void reset_ids();

}  // namespace fb::report::section
