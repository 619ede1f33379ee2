#include "copy_work.hpp"

#include <fmt/format.h>

#include <vector>

#include "cuda_common/stream_timer.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/stats.hpp"

namespace fb::gpu {

CopyWork::CopyWork(Devices& devices, DeviceStream& stream, int device, std::uint64_t bytes)
    : stream_(stream),
      bytes_(bytes),
      src_(devices, MemoryKind::device, device),
      dst_(devices, MemoryKind::device, device),
      sm_count_(devices.props(device).sm_count) {
  for (Buffer* b : {&src_, &dst_})
    if (const std::string error = b->grow(bytes); !error.empty())
      throw UsageError(fmt::format(
          "the products fit, but not beside them the two buffers of {} MiB the step's memory-bound work copies "
          "between: {}",
          bytes >> 20, error));
  for (int i = 0; i < kWarmup; ++i) copy();
  std::vector<double> start(kIters), duration(kIters);
  StreamTimer timer(stream_.timing_queue());
  timer.time_queued({start, duration}, [&] { copy(); });
  copy_us_ = summarize(duration).median_us;
}

void CopyWork::copy() { stream_.sm_copy(dst_.data(), src_.data(), bytes_, sm_count_); }

}  // namespace fb::gpu
