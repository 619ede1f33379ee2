#include "rows.hpp"

#include "fabricbench/core/layout.hpp"
#include "fabricbench/core/types.hpp"

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
  const auto known = parse_op(op);  // busbw = algbw x the op's factor, as every writer keeps it
  m.busbw_gbps = m.algbw_gbps * (known ? busbw_factor(*known, nranks) : 1.0);
  return m;
}

}  // namespace fb::test
