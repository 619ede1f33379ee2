// Other programs' text (training logs, nccl-tests output) read line by line
// by parsers built on std::regex. libstdc++'s regex recurses once per
// character a match consumes: a line of about 30 KB (a 180 KB log line, a
// 200,000-digit number) overflows an 8 MiB stack and the process dies with
// SIGSEGV. So such a parser passes over lines longer than
// kMaxForeignLineBytes and says how many it passed over; no line it reads
// comes near that (a Megatron-LM iteration line is about 500 bytes, an
// nccl-tests row about 150).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace fb {

inline constexpr std::size_t kMaxForeignLineBytes = 8192;

class LongLines {
 public:
  // False (and counted) for a line too long to parse; `number` is 1-based.
  bool keep(std::string_view line, std::size_t number);
  std::size_t count() const { return count_; }
  // "3 lines of SOURCE longer than 8192 bytes were not read (the first is line 12)", or "" when none.
  [[nodiscard]] std::string note(std::string_view source) const;

 private:
  std::size_t count_ = 0;
  std::size_t first_ = 0;
};

}  // namespace fb
