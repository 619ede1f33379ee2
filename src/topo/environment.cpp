// The environment part of a rank's inventory (topo/environment.hpp).
#include "fabricbench/topo/environment.hpp"

#include <unistd.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>

namespace fb::topo {
// Named, not anonymous: a unity batch shares one translation unit.
namespace env_read {

using json = nlohmann::ordered_json;

// The libraries whose settings change what a benchmark measures.
constexpr std::array<std::string_view, 3> kPrefixes{"NCCL_", "UCX_", "OMPI_MCA_"};

// mpirun's own bookkeeping for each process (its rank, the daemon's URI, the
// session folder, a key shared by the job's processes; on other nodes its
// daemon adds plm=rsh and routed=radix, which the first node's ranks lack):
// no user's setting, different between ranks by design.
constexpr std::array<std::string_view, 8> kLauncherOwned{
    "OMPI_MCA_orte_", "OMPI_MCA_ess",    "OMPI_MCA_prte_",        "OMPI_MCA_pmix",
    "OMPI_MCA_plm",   "OMPI_MCA_routed", "OMPI_MCA_initial_wdir", "OMPI_MCA_shmem_RUNTIME_QUERY_hint"};

// Words in a name that may mean its value is a credential.
constexpr std::array<std::string_view, 7> kSecretWords{"KEY",    "TOKEN",      "SECRET", "PASSWORD",
                                                       "PASSWD", "CREDENTIAL", "AUTH"};

bool starts_with_any(std::string_view name, const auto& prefixes) {
  for (const auto p : prefixes)
    if (name.starts_with(p)) return true;
  return false;
}

bool may_be_secret(std::string_view name) {
  std::string upper(name);
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const auto w : kSecretWords)
    if (upper.find(w) != std::string::npos) return true;
  return false;
}

std::string trimmed(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

// NCCL's file format: NAME=value per line, '#' starts a comment line.
json file_json(const std::string& path, std::vector<std::string>& withheld) {
  std::ifstream in(path);
  if (!in) {
    if (errno == ENOENT) return nullptr;
    return {{"path", path}, {"error", std::strerror(errno)}};
  }
  json settings = json::object();
  std::string line;
  while (std::getline(in, line)) {
    const std::string t = trimmed(line);
    const auto eq = t.find('=');
    if (t.empty() || t[0] == '#' || eq == std::string::npos) continue;
    const std::string name = trimmed(std::string_view(t).substr(0, eq));
    if (!name.starts_with("NCCL_")) continue;  // NCCL reads only its own names there
    if (may_be_secret(name)) {
      withheld.push_back(name);
      continue;
    }
    settings[name] = trimmed(std::string_view(t).substr(eq + 1));
  }
  return {{"path", path}, {"settings", settings}};
}

}  // namespace env_read

EnvironmentSources EnvironmentSources::of_this_process() {
  EnvironmentSources s;
  for (char** e = environ; e && *e; ++e) s.entries.emplace_back(*e);
  if (const char* f = std::getenv("NCCL_CONF_FILE"); f && *f)
    s.user_file = f;
  else if (const char* home = std::getenv("HOME"); home && *home)
    s.user_file = std::string(home) + "/.nccl.conf";
  return s;
}

nlohmann::ordered_json environment_json(const EnvironmentSources& sources) {
  std::map<std::string, std::string> variables;  // sorted: ranks compare the same way
  std::vector<std::string> withheld;
  for (const auto& entry : sources.entries) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = entry.substr(0, eq);
    if (!env_read::starts_with_any(name, env_read::kPrefixes) ||
        env_read::starts_with_any(name, env_read::kLauncherOwned))
      continue;
    if (env_read::may_be_secret(name))
      withheld.push_back(name);
    else
      variables[name] = entry.substr(eq + 1);
  }
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const auto& path : {sources.system_file, sources.user_file})
    if (!path.empty())
      if (nlohmann::ordered_json f = env_read::file_json(path, withheld); !f.is_null()) files.push_back(std::move(f));
  nlohmann::ordered_json out = {{"variables", variables}, {"files", files}};
  if (!withheld.empty()) out["withheld"] = withheld;
  return out;
}

}  // namespace fb::topo
