#include "fabricbench/core/csv.hpp"

namespace fb {

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_row(const std::vector<std::string>& fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) out += ',';
    out += csv_field(fields[i]);
  }
  return out;
}

std::string CsvWriter::open(const std::string& path, bool overwrite, const std::vector<std::string>& header) {
  if (auto err = file_.open(path, overwrite); !err.empty()) return err;
  if (!write_row(header)) return error();
  return {};
}

bool CsvWriter::write_row(const std::vector<std::string>& fields) { return file_.append(csv_row(fields) + "\n"); }

}  // namespace fb
