#include "process.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fb::test {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::string make_temp_dir(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
  if (!mkdtemp(pattern.data())) return {};
  return pattern;
}

ProcessResult run_process(const std::string& command) {
  const std::string dir = make_temp_dir("fb_proc_");
  const std::string out = dir + "/out";
  const std::string err = dir + "/err";
  const int status = std::system((command + " >" + out + " 2>" + err).c_str());
  ProcessResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  std::filesystem::remove_all(dir);
  return r;
}

std::string mpirun(int ranks) {
  return std::string(FB_MPIEXEC) + " --allow-run-as-root --oversubscribe --bind-to none -np " + std::to_string(ranks);
}

}  // namespace fb::test
