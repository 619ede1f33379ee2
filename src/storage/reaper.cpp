#include "fabricbench/storage/reaper.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

extern char** environ;

namespace fb::storage {
namespace {

std::mutex g_mutex;
std::string g_program;

constexpr int kPipeFd = 3, kBaseFd = 4, kRunFd = 5, kRankFd = 6;

// A copy of `fd` above the numbers the reaper's descriptors get, so that
// placing them cannot overwrite one another.
int high_copy(int fd) { return ::fcntl(fd, F_DUPFD_CLOEXEC, 64); }

void remove_files(int dir_fd) {
  const int fd = ::dup(dir_fd);
  if (fd < 0) return;
  DIR* dir = ::fdopendir(fd);
  if (!dir) {
    ::close(fd);
    return;
  }
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(dir))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
  ::closedir(dir);
  for (const auto& n : names) ::unlinkat(dir_fd, n.c_str(), 0);
}

}  // namespace

void use_reaper(const std::string& program) {
  std::lock_guard lock(g_mutex);
  g_program = program;
}

Reaper start_reaper(int base_fd, int run_fd, int rank_fd, const std::string& run_name, const std::string& rank_name) {
  Reaper r;
  std::string program;
  {
    std::lock_guard lock(g_mutex);
    program = g_program;
  }
  if (program.empty()) return r;
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return r;
  const int copies[4] = {high_copy(p[0]), high_copy(base_fd), high_copy(run_fd), high_copy(rank_fd)};
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  const int targets[4] = {kPipeFd, kBaseFd, kRunFd, kRankFd};
  bool ok = true;
  for (int i = 0; i < 4; ++i)
    ok = ok && copies[i] >= 0 && posix_spawn_file_actions_adddup2(&actions, copies[i], targets[i]) == 0;
  // Not the rank's output pipes: the launcher would wait for them to close.
  for (const int std_fd : {0, 1, 2})
    ok = ok && posix_spawn_file_actions_addopen(&actions, std_fd, "/dev/null", O_RDWR, 0) == 0;
  // Its own process group: mpirun signals a rank's whole group.
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  const std::string command = kReaperCommand;
  std::vector<char*> argv{const_cast<char*>(program.c_str()), const_cast<char*>(command.c_str()),
                          const_cast<char*>(run_name.c_str()), const_cast<char*>(rank_name.c_str()), nullptr};
  pid_t pid = -1;
  if (ok && ::posix_spawn(&pid, program.c_str(), &actions, &attr, argv.data(), environ) == 0) {
    r.pid = pid;
    r.pipe_fd = p[1];
  } else {
    ::close(p[1]);
  }
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(p[0]);
  for (const int c : copies)
    if (c >= 0) ::close(c);
  return r;
}

void release_reaper(Reaper& r) {
  if (r.pipe_fd < 0) return;
  const char done = 'd';
  [[maybe_unused]] const ssize_t n = ::write(r.pipe_fd, &done, 1);
  ::close(r.pipe_fd);
  r.pipe_fd = -1;
  if (r.pid > 0) {
    int status = 0;
    while (::waitpid(r.pid, &status, 0) < 0 && errno == EINTR) {
    }
    r.pid = -1;
  }
}

int reaper_main(int argc, char** argv) {
  if (argc != 3) return 2;
  // The signals that end the job are for the rank; this process outlives it.
  for (const int s : {SIGTERM, SIGINT, SIGHUP, SIGPIPE}) ::signal(s, SIG_IGN);
  char byte = 0;
  ssize_t n = 0;
  do {
    n = ::read(kPipeFd, &byte, 1);
  } while (n < 0 && errno == EINTR);
  if (n == 1) return 0;  // the rank removed its files itself
  remove_files(kRankFd);
  ::unlinkat(kRunFd, argv[2], AT_REMOVEDIR);
  ::unlinkat(kBaseFd, argv[1], AT_REMOVEDIR);  // unless another rank's folder is still in it
  return 0;
}

}  // namespace fb::storage
