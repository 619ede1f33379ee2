// One rule for every numeric flag of every command, applied where the
// command's flags are parsed: a FLOAT is a finite number (CLI11 reads "nan"
// and "1e999" as numbers), an INT is never negative (every INT flag is a
// count, a size, a rank, a device or a process id). Each flag's own range
// (--iters from 1, --threshold up to 1...) stays with the command.
#pragma once

#include <CLI/CLI.hpp>

namespace fb::cli {

// Adds the rule to every FLOAT and INT option of `app` and its subcommands,
// once (again is harmless). Call after the options are defined, before parsing.
void refuse_nonsense_numbers(CLI::App& app);

}  // namespace fb::cli
