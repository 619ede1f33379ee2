#include "fabricbench/core/sinks.hpp"

namespace fb {

void SinkList::begin(const RunHeader& header) {
  for (auto& s : sinks_) s->begin(header);
}
void SinkList::progress(const Progress& p) {
  for (auto& s : sinks_) s->progress(p);
}
void SinkList::measurement(const Measurement& row) {
  for (auto& s : sinks_) s->measurement(row);
}
void SinkList::skip(const Skip& skip) {
  for (auto& s : sinks_) s->skip(skip);
}
void SinkList::size_done() {
  for (auto& s : sinks_) s->size_done();
}
void SinkList::record_line(const RecordLine& line) {
  for (auto& s : sinks_) s->record_line(line);
}
void SinkList::end(const Summary& summary) {
  for (auto& s : sinks_) s->end(summary);
}
void SinkList::abort(const Summary& summary) {
  for (auto& s : sinks_) s->abort(summary);
}
std::string SinkList::error() const {
  for (const auto& s : sinks_)
    if (auto e = s->error(); !e.empty()) return e;
  return {};
}

}  // namespace fb
