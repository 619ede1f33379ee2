// The last line of cleanup: a small process per rank and folder that waits
// for the rank to go and then removes whatever the rank left in its folder.
// A signal handler cannot help against SIGKILL, and Open MPI's mpirun sends
// SIGKILL one second after SIGTERM (odls_base_sigkill_timeout), on Ctrl-C
// at once; removing thousands of small files on a loaded or remote
// filesystem can take longer than that. The reaper is fabricbench itself,
// started (posix_spawn: no fork of the MPI process) with a hidden command
// in a process group of its own, so the launcher's kill of the rank's group
// does not reach it. It holds the folders by descriptor and learns of the
// rank's end from a pipe: a byte when the rank removed its files itself
// (the reaper then just exits), end of file when the rank died.
#pragma once

#include <string>

namespace fb::storage {

// The hidden command fabricbench's main() hands to reaper_main().
inline constexpr const char* kReaperCommand = "__storage-reaper";

// The program to start as reaper ("/proc/self/exe" in fabricbench). Without
// one (unit tests link the module into other programs) no reaper is started.
void use_reaper(const std::string& program);

struct Reaper {
  int pid = -1;
  int pipe_fd = -1;  // write end: a byte = "done", closing it without one = "clean up"
};

// Starts a reaper for the rank folder `rank_fd` (named `rank_name` in the run
// folder `run_fd`, named `run_name` in `base_fd`). A reaper that cannot be
// started is no error (the in-process cleanup still runs): pid -1.
Reaper start_reaper(int base_fd, int run_fd, int rank_fd, const std::string& run_name, const std::string& rank_name);
// The rank cleaned up itself: the reaper exits without touching anything.
void release_reaper(Reaper& reaper);

// argv: { kReaperCommand, run_name, rank_name }; descriptors 3 (the pipe), 4
// (base), 5 (run folder), 6 (rank folder).
int reaper_main(int argc, char** argv);

}  // namespace fb::storage
