// Commands that run alone, without MPI (model, report): run the body and turn
// its errors into exit codes with one message on stderr naming the command.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace fb::cli {

// `body` parses the arguments with `app` and does the work. --help prints
// the help of the subcommand asked for (exit 0); a CLI11 parse error or an
// fb::UsageError prints "fabricbench <command>: <message>" (exit 2).
// Every numeric flag is held to refuse_nonsense_numbers (number_flags.hpp).
int run_alone(const char* command, CLI::App& app, const std::function<int()>& body);

// A command given no subcommand: its subcommands with what each does, on
// stderr; exit 2 (as `fabricbench` alone lists the commands).
int list_subcommands(const char* command, const CLI::App& app);
// "fit, step, scale": the names, for messages.
std::string subcommand_names(const CLI::App& app);

}  // namespace fb::cli
