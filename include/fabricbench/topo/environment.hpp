// What a rank's environment tells the libraries that move its bytes: the
// NCCL_*, UCX_* and OMPI_MCA_* variables and NCCL's configuration files
// (/etc/nccl.conf, then ${NCCL_CONF_FILE} or ~/.nccl.conf). Recorded in the
// inventory line as `environment` (docs/results-schema.md); what in it
// distorts a benchmark is judged from the record (core/environment_audit.hpp).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace fb::topo {

// `entries`: "NAME=value" strings as in environ. Only the three prefixes are
// kept (nothing else of the environment is recorded); a kept name that
// suggests a secret has its value withheld; Open MPI's launcher bookkeeping
// (OMPI_MCA_orte_*, ess_base_*, ...: per-rank ids, URIs, a job key) is left
// out, being no setting. Files are read at the paths given, "" skipped.
struct EnvironmentSources {
  std::vector<std::string> entries;
  std::string system_file = "/etc/nccl.conf";
  std::string user_file;  // ${NCCL_CONF_FILE}, else ${HOME}/.nccl.conf; "" when neither is set
  static EnvironmentSources of_this_process();
};

// {"variables": {NAME: value, ...}, "files": [{"path", "settings": {...}} or
// {"path", "error"}], "withheld": [names]}: a file that does not exist is
// not listed.
nlohmann::ordered_json environment_json(const EnvironmentSources& sources);

}  // namespace fb::topo
