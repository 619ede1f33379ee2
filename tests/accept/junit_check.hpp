// Reads a JUnit file back with Python's XML parser (tests/accept/junit_counts.py).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace fb::test {

// The counts the parser found, or a JSON object with "problem" when the file
// is not well-formed or Python is missing.
nlohmann::json junit_counts(const std::string& path);

}  // namespace fb::test
