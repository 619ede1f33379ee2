// A build with CUDA but without NCCL: the nccl backend says so.
#include "gpu_backends.hpp"

namespace fb {

BackendInfo nccl_backend_info() {
  return {"nccl", "NCCL collectives on device buffers (needs NCCL)",
          [] { return std::string("built without NCCL (nccl.h or libnccl not found at configure time; set NCCL_HOME)"); },
          nullptr};
}

}  // namespace fb
