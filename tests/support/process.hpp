// Run a shell command from a test and keep its exit code, stdout and stderr.
#pragma once

#include <string>

namespace fb::test {

struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

ProcessResult run_process(const std::string& command);

// "mpirun -np N --oversubscribe --bind-to none" with what this machine needs.
std::string mpirun(int ranks);

// A fresh folder under the temporary directory, removed by the caller.
std::string make_temp_dir(const std::string& prefix);

}  // namespace fb::test
