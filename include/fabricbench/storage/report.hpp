// The storage rows for people (a table like run's, one line per row as it
// is measured) and for spreadsheets (CSV through core/csv.hpp).
#pragma once

#include <string>
#include <vector>

#include "fabricbench/core/record_lines.hpp"
#include "fabricbench/storage/runner.hpp"

namespace fb::storage {

// "# --path /shared/ds: fuse.sshfs (network) root@10.0.0.1:/export, rw,...; one filesystem for all 3 nodes"
std::string describe_target(const Target& target, int nodes);
std::string table_header();
std::string table_row(const StorageLine& line);
// Rows whose figure is not the storage's, or where O_DIRECT was refused, explained once each.
std::string table_notes(const std::vector<StorageLine>& lines);

std::vector<std::string> csv_header();
std::vector<std::string> csv_fields(const StorageLine& line);

}  // namespace fb::storage
