// Small helpers the subcommands share.
#pragma once

#include <functional>

namespace fb::cli {

// Runs a command's body. An exception here means a call failed on this rank
// (a backend, CUDA, NCCL): the other ranks may be blocked in the same
// operation, so the whole job is aborted with exit 3 rather than left
// hanging; the record keeps every line already written.
int abort_on_error(const std::function<int()>& body);

}  // namespace fb::cli
