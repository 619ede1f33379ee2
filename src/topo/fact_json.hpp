// The record's JSON form of topo's facts, for the sources that write inventory JSON.
#pragma once

#include <nlohmann/json.hpp>

#include "fabricbench/core/fact.hpp"

namespace fb::topo {

// The record's convention for facts: the value, or null and the reason under
// "unknown" in the same object.
template <typename T>
void put(nlohmann::ordered_json& obj, const char* key, const Fact<T>& fact) {
  if (fact) {
    obj[key] = *fact;
  } else {
    obj[key] = nullptr;
    obj["unknown"][key] = fact.why();
  }
}

// The "unknown" map last in the object, after the facts it explains.
inline void unknown_last(nlohmann::ordered_json& obj) {
  if (!obj.contains("unknown")) return;
  auto unknown = std::move(obj["unknown"]);
  obj.erase("unknown");
  obj["unknown"] = std::move(unknown);
}

}  // namespace fb::topo
