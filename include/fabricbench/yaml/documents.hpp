// One YAML file, one document: the profile, workload, quotes and preset
// readers all refuse a second document, which yaml-cpp's Load would drop
// without a word (with every rule or setting in it).
#pragma once

#include <string>

namespace fb::yaml {

// The number of documents in `text`, counting no further than two. Not
// yaml-cpp's LoadAll: it runs out of memory on some malformed texts (found by
// the parsers' fuzz tests), while the event parser stops after the second.
// Throws YAML::Exception for text that is not YAML, as Load would.
int documents_up_to_two(const std::string& text);

}  // namespace fb::yaml
