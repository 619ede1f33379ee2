#include "rows.hpp"

namespace fb::test {

Measurement measurement_row(const std::string& op, const std::string& scope, int nranks, std::uint64_t bytes,
                            double median_us, double spread) {
  Measurement m;
  m.op = op;
  m.backend = "mpi";
  m.scope = scope;
  m.path = "shm";
  m.dtype = "float";
  m.nranks = nranks;
  m.bytes = bytes;
  m.count = bytes / 4;
  m.time = {20, median_us * (1 - spread), median_us, median_us, median_us * (1 + spread), median_us * (1 + spread),
            median_us * spread / 2};
  m.algbw_gbps = static_cast<double>(bytes) / median_us / 1e3;
  m.busbw_gbps = m.algbw_gbps;
  return m;
}

}  // namespace fb::test
