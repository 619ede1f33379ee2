// What core's comm*.cpp share and nobody else needs.
#pragma once

#include <mpi.h>

namespace fb::detail {

// Waits for `request` of the non-blocking `call` (named in an error),
// polling every few microseconds and sleeping in between.
void wait_quiet(MPI_Request& request, const char* call);

}  // namespace fb::detail
