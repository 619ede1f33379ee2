// The CUDA runtime and driver and the NCCL this process loaded, as the GPU
// plugins report them (unknown, saying why, where no plugin loaded), for the
// inventory lines of the record (topo::gather_inventory).
#pragma once

#include "fabricbench/topo/inventory.hpp"

namespace fb {

topo::LinkedVersions loaded_library_versions();

}  // namespace fb
