// The path label's MCA values, read without MPI_T, against what MPI_T says
// in this very job (the launcher's --mca arguments and Open MPI's parameter
// files as they are on this machine).
#include <gtest/gtest.h>

#include "mpi_host/mpi_path.hpp"

namespace fb {
namespace {

TEST(MpiPath, McaValuesWithoutMpiTAreWhatMpiTSays) {
  const McaSources sources = process_mca_sources();
  for (const char* name : {"btl", "pml"}) {
    const auto fast = mca_value_without_mpit(name, sources);
    ASSERT_TRUE(fast.has_value()) << name << ": this build knows Open MPI's sysconfdir, so no MPI_T is needed";
    EXPECT_EQ(*fast, mpit_cvar(name)) << name;
  }
}

}  // namespace
}  // namespace fb
