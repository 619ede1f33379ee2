// The project's one CSV writer: RFC 4180 fields (a field holding a comma, a
// double quote, CR or LF is quoted and its quotes doubled), LF line ends, a
// header row first; rows written whole or not at all, errors kept like the
// record's (output_file.hpp). `run --csv`, `gemm --csv` and the model's
// and report's `--format csv` all use it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/core/output_file.hpp"

namespace fb {

std::string csv_field(std::string_view text);
// The fields joined by commas, each quoted as it needs; no line end.
std::string csv_row(const std::vector<std::string>& fields);

class CsvWriter {
 public:
  CsvWriter() : file_("CSV file") {}
  // Opens (output_file.hpp's rules) and writes the header row. "" or the problem.
  [[nodiscard]] std::string open(const std::string& path, bool overwrite, const std::vector<std::string>& header);
  // False when the row is not in the file (see error()).
  bool write_row(const std::vector<std::string>& fields);
  bool sync() { return file_.sync(); }
  const std::string& path() const { return file_.path(); }
  // "" while every write succeeded, else the first failure (file and errno).
  [[nodiscard]] const std::string& error() const { return file_.error(); }

 private:
  LineFile file_;
};

}  // namespace fb
