#include "fabricbench/core/sinks.hpp"

namespace fb {

void SinkList::begin(const nlohmann::ordered_json& header) {
  for (auto& s : sinks_) s->begin(header);
}
void SinkList::progress(const Progress& p) {
  for (auto& s : sinks_) s->progress(p);
}
void SinkList::measurement(const Measurement& row) {
  for (auto& s : sinks_) s->measurement(row);
}
void SinkList::line(const nlohmann::ordered_json& line) {
  for (auto& s : sinks_) s->line(line);
}
void SinkList::skip(const Skip& skip) {
  for (auto& s : sinks_) s->skip(skip);
}
void SinkList::size_done() {
  for (auto& s : sinks_) s->size_done();
}
void SinkList::record_line(const nlohmann::ordered_json& line) {
  for (auto& s : sinks_) s->record_line(line);
}
void SinkList::end(const nlohmann::ordered_json& summary) {
  for (auto& s : sinks_) s->end(summary);
}
void SinkList::abort(const nlohmann::ordered_json& summary) {
  for (auto& s : sinks_) s->abort(summary);
}

}  // namespace fb
