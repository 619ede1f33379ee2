// A JSON value that travels whole through code that does not read it: a
// command's options into the record header, the watchdog's report into the
// summary. Only the JSON library's forward declarations come with it, so the
// many files that pass such a value on do not compile the library
// (issue 33: `<nlohmann/json.hpp>` in at most 40 files under src/).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <memory>

namespace fb {

// A JSON value carried whole (shared, never changed once made). Null when empty.
class JsonValue {
 public:
  JsonValue() = default;
  JsonValue(const nlohmann::ordered_json& value);  // NOLINT(google-explicit-constructor): a JSON value is one
  bool is_null() const;
  const nlohmann::ordered_json& get() const;  // a null value when empty

 private:
  std::shared_ptr<const nlohmann::ordered_json> value_;
};

}  // namespace fb
