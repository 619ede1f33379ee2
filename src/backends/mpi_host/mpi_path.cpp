#include "mpi_path.hpp"

#include <mpi.h>

#include <cstring>
#include <vector>

namespace fb {
namespace {

bool list_has(std::string_view list, std::string_view name) {
  std::size_t pos = 0;
  while (pos <= list.size()) {
    const std::size_t comma = list.find(',', pos);
    const std::string_view item = list.substr(pos, comma == std::string_view::npos ? list.npos : comma - pos);
    if (item == name) return true;
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return false;
}

// The string value of an MPI_T control variable, or "" when absent.
std::string read_cvar(const char* wanted) {
  int num = 0;
  if (MPI_T_cvar_get_num(&num) != MPI_SUCCESS) return {};
  for (int i = 0; i < num; ++i) {
    char name[256];
    char desc[8];
    int name_len = sizeof(name);
    int desc_len = sizeof(desc);
    int verbosity = 0;
    int bind = 0;
    int scope = 0;
    MPI_Datatype type;
    MPI_T_enum enumtype;
    if (MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &enumtype, desc, &desc_len, &bind, &scope) !=
            MPI_SUCCESS ||
        std::strcmp(name, wanted) != 0 || type != MPI_CHAR)
      continue;
    MPI_T_cvar_handle handle;
    int count = 0;
    if (MPI_T_cvar_handle_alloc(i, nullptr, &handle, &count) != MPI_SUCCESS) return {};
    std::vector<char> value(static_cast<std::size_t>(count > 0 ? count : 1) + 1, '\0');
    const bool read = MPI_T_cvar_read(handle, value.data()) == MPI_SUCCESS;
    // A handle that will not free costs nothing but itself: the value stands.
    (void)MPI_T_cvar_handle_free(&handle);
    return read ? value.data() : "";
  }
  return {};
}

}  // namespace

bool mca_allows(std::string_view list, std::string_view name) {
  if (list.empty()) return true;
  if (list.front() == '^') return !list_has(list.substr(1), name);
  return list_has(list, name);
}

std::string classify_mpi_path(bool same_node, std::string_view pml, std::string_view btl) {
  if (same_node) {
    if (mca_allows(btl, "vader") || mca_allows(btl, "sm")) return "shm";
    return mca_allows(btl, "tcp") ? "tcp" : "mpi";
  }
  if (pml == "ucx") return "ucx";
  const bool rdma = mca_allows(btl, "openib") || mca_allows(btl, "uct") || mca_allows(btl, "ofi");
  if (!rdma && mca_allows(btl, "tcp")) return "tcp";
  return "net";
}

std::string mpi_path(const Comm& group) {
  const bool same_node = group.split_node().size() == group.size();
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return classify_mpi_path(same_node, "", "");
  const std::string pml = read_cvar("pml");
  const std::string btl = read_cvar("btl");
  (void)MPI_T_finalize();  // the values are read; nothing depends on the tool interface closing
  return classify_mpi_path(same_node, pml, btl);
}

}  // namespace fb
