#include "fabricbench/yaml/documents.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <sstream>

namespace fb::yaml {
namespace {

// Only whether a document came is needed: parsing the second document is how
// it is told apart from trailing text.
class NoEvents : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

int documents_up_to_two(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  NoEvents events;
  int docs = 0;
  while (docs < 2 && parser.HandleNextDocument(events)) ++docs;
  return docs;
}

}  // namespace fb::yaml
