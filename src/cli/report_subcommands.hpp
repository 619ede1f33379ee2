// The subcommands of `fabricbench report` that live in their own files: each
// adds itself to the report app and says how to run once parsed, so
// report_command.cpp registers one with one line.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/core/record.hpp"

namespace fb::cli {

struct ReportSubcommand {
  CLI::App* app = nullptr;
  std::function<int(int argc, char** argv)> run;  // after parsing, when app->parsed(); argv as report_main got it
};

// The record a subcommand reads: unreadable, it is bad input (UsageError, exit 2).
Results read_or_usage(const std::string& path);
// Refuses a record that holds none of the lines a subcommand prints (`has`
// false): names them (`lines`: "step lines") and the record to give instead
// (`give`: "a `fabricbench step --out`").
void refuse_without(bool has, const Results& r, std::string_view lines, std::string_view give);

// `report html REC... [--check check.json] [--workload W --quotes Q] -o report.html`
ReportSubcommand add_report_html(CLI::App& report);
// `report import nccl-tests FILE... --out REC.jsonl`
ReportSubcommand add_report_import(CLI::App& report);
// `report verdict check.json`: "STATUS EXIT_CODE"
ReportSubcommand add_report_verdict(CLI::App& report);
// `report blamed check.json`: "HOST\tWHY" per node a failed rule blames
ReportSubcommand add_report_blamed(CLI::App& report);
// The readers of one record for scripts, each printing what a script needs
// of it: `report rows REC` (each measurement row's times, tab-separated),
// `report steps REC` (a step record's modes), `report status REC` (how the
// run ended, "STATUS[\tWHY]"), `report lines REC` (every line, checked, as
// JSON Lines at this binary's schema), `report scopes REC [--rows]` (the
// scopes measured), `report storage REC` (a storage record's rows).
std::vector<ReportSubcommand> add_record_readers(CLI::App& report);

}  // namespace fb::cli
