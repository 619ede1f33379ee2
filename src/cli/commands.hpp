// The subcommands. Each one parses its own flags and returns an exit code
// (fb::ExitCode); the CLI only wires options to the engine and the sinks.
#pragma once

#include <string_view>
#include <vector>

namespace fb::cli {

using CommandMain = int (*)(int argc, char** argv);

struct Command {
  std::string_view name;
  std::string_view summary;
  CommandMain main;
};

const std::vector<Command>& commands();

int run_main(int argc, char** argv);
int check_main(int argc, char** argv);
int topo_main(int argc, char** argv);
int model_main(int argc, char** argv);
int report_main(int argc, char** argv);
int pairs_main(int argc, char** argv);
int step_main(int argc, char** argv);
int gemm_main(int argc, char** argv);
int storage_main(int argc, char** argv);
int diagnose_main(int argc, char** argv);

}  // namespace fb::cli
