#include "mpi_path.hpp"

#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
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
[[nodiscard]] std::string read_cvar(const char* wanted) {
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

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

std::string read_if_there(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct Selection {
  std::string pml;
  std::string btl;
};

// MPI_T_init_thread registers every component of every framework before it
// answers: 220 ms per call with Open MPI 4.1 on this project's test machine,
// most of a trivial run's start (issue 21). So the values come from where
// Open MPI takes them, and MPI_T only when those cannot tell.
Selection read_selection() {
  const McaSources sources = process_mca_sources();
  const auto pml = mca_value_without_mpit("pml", sources);
  const auto btl = mca_value_without_mpit("btl", sources);
  return {pml ? *pml : mpit_cvar("pml"), btl ? *btl : mpit_cvar("btl")};
}

}  // namespace

std::string mpit_cvar(const char* name) {
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return {};
  std::string value = read_cvar(name);
  (void)MPI_T_finalize();
  return value;
}

bool mca_allows(std::string_view list, std::string_view name) {
  if (list.empty()) return true;
  if (list.front() == '^') return !list_has(list.substr(1), name);
  return list_has(list, name);
}

std::string classify_mpi_path(bool same_node, std::string_view pml, std::string_view btl) {
  // UCX moves same-node traffic with its own transports (shared memory for
  // host buffers, cuda_ipc for device buffers), not the btl's (issue 34, defect 10).
  if (pml == "ucx") return "ucx";
  if (same_node) {
    if (mca_allows(btl, "vader") || mca_allows(btl, "sm")) return "shm";
    return mca_allows(btl, "tcp") ? "tcp" : "mpi";
  }
  const bool rdma = mca_allows(btl, "openib") || mca_allows(btl, "uct") || mca_allows(btl, "ofi");
  if (!rdma && mca_allows(btl, "tcp")) return "tcp";
  return "net";
}

std::optional<std::string> mca_file_value(std::string_view text, std::string_view name) {
  std::optional<std::string> value;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = trim(text.substr(pos, end - pos));
    pos = end + 1;
    const std::size_t eq = line.find('=');
    if (line.empty() || line.front() == '#' || eq == std::string_view::npos) continue;
    if (trim(line.substr(0, eq)) == name) value = std::string(trim(line.substr(eq + 1)));  // the last line wins
  }
  return value;
}

std::optional<std::string> mca_value_without_mpit(std::string_view name, const McaSources& sources) {
  const std::string var = "OMPI_MCA_" + std::string(name);
  if (const char* v = sources.env(var.c_str())) return std::string(v);
  // Files or a prefix other than the default ones: only Open MPI can say what they set.
  for (const char* other : {"OMPI_MCA_mca_base_param_files", "OMPI_MCA_mca_param_files",
                            "OMPI_MCA_mca_base_param_file_prefix", "OMPI_MCA_mca_base_envar_file_prefix",
                            "OPAL_PREFIX", "OPAL_SYSCONFDIR"})
    if (sources.env(other)) return std::nullopt;
  if (sources.files.empty()) return std::nullopt;
  for (const auto& file : sources.files)  // highest precedence first
    if (auto v = mca_file_value(sources.read(file), name)) return v;
  return std::string();
}

McaSources process_mca_sources() {
  McaSources s;
  s.env = [](const char* var) { return std::getenv(var); };
  s.read = read_if_there;
#ifdef FB_OMPI_SYSCONFDIR
  if (const char* home = std::getenv("HOME")) s.files.push_back(std::string(home) + "/.openmpi/mca-params.conf");
  s.files.push_back(std::string(FB_OMPI_SYSCONFDIR) + "/openmpi-mca-params.conf");
#endif
  return s;
}

std::string mpi_path(const Comm& group) {
  const bool same_node = group.split_node().size() == group.size();
  static const Selection selection = read_selection();  // fixed at MPI_Init: read once per process
  return classify_mpi_path(same_node, selection.pml, selection.btl);
}

}  // namespace fb
