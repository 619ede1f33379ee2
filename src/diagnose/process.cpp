// The job's process from /proc: alive or not, and the CPU time it and its
// descendants (data-loader workers are child processes) spend.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "fabricbench/diagnose/sampler.hpp"

namespace fb::diagnose {
namespace {

// The fields of /proc/PID/stat that matter here (proc(5)): comm may hold
// spaces and parentheses, so the fields after it are counted from the last ')'.
struct Stat {
  std::string comm;
  char state = '?';
  int ppid = 0;
  double cpu_ticks = 0;  // utime + stime
};

std::optional<Stat> read_stat(const std::string& root, int pid) {
  std::ifstream in(fmt::format("{}/{}/stat", root, pid));
  std::string text;
  if (!in || !std::getline(in, text)) return std::nullopt;
  const auto open = text.find('(');
  const auto close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  Stat s;
  s.comm = text.substr(open + 1, close - open - 1);
  std::istringstream rest(text.substr(close + 1));
  // Fields 3.. : state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
  std::string skip;
  double utime = 0, stime = 0;
  rest >> s.state >> s.ppid;
  for (int i = 0; i < 9; ++i) rest >> skip;
  rest >> utime >> stime;
  if (!rest) return std::nullopt;
  s.cpu_ticks = utime + stime;
  return s;
}

// Every process's parent, for the descendants of the job.
std::multimap<int, int> children_of_all(const std::string& root) {
  std::multimap<int, int> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const int pid = std::stoi(name);
    if (const auto s = read_stat(root, pid)) out.emplace(s->ppid, pid);
  }
  return out;
}

}  // namespace

ProcessReader::ProcessReader(int pid, std::string proc_root) : root_(std::move(proc_root)) {
  series_.pid = pid;
  const auto s = read_stat(root_, pid);
  if (!s || s->state == 'Z') {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    series_.error = fmt::format("--pid {}: no such process running on {} ({}); the rest of the diagnosis goes on "
                                "without it",
                                pid, host, s ? "a zombie: it has ended" : "nothing at " + root_ + "/" + std::to_string(pid));
    return;
  }
  series_.name = s->comm;
}

void ProcessReader::sample(double t_s, std::vector<std::string>& notes) {
  if (!series_.error.empty()) return;
  ProcessSample p;
  p.t_s = t_s;
  const auto self = read_stat(root_, series_.pid);
  p.alive = self && self->state != 'Z';
  if (!p.alive) {
    p.cpu_s = Fact<double>::unknown("the process has ended");
    if (!ended_noted_) {
      notes.push_back(fmt::format("--pid {} ({}) ended {:.1f} s into the window", series_.pid, series_.name, t_s));
      ended_noted_ = true;
    }
    series_.samples.push_back(std::move(p));
    return;
  }
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  const auto children = children_of_all(root_);
  double ticks = self->cpu_ticks;
  int count = 1;
  std::vector<int> todo{series_.pid};
  while (!todo.empty()) {
    const int parent = todo.back();
    todo.pop_back();
    for (auto [it, end] = children.equal_range(parent); it != end; ++it) {
      if (const auto c = read_stat(root_, it->second)) {
        ticks += c->cpu_ticks;
        ++count;
        todo.push_back(it->second);
      }
    }
  }
  p.cpu_s = ticks / tick;
  p.processes = count;
  series_.samples.push_back(std::move(p));
}

}  // namespace fb::diagnose
