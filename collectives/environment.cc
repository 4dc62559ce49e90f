#include "collectives/environment.h"

#include <cstdlib>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"

namespace ts::collectives {

namespace {

constexpr int kDefaultMasterPort = 29500;

absl::StatusOr<int> int_var(const EnvLookup& getenv, absl::string_view name) {
  std::optional<std::string> value = getenv(name);
  if (!value) return absl::NotFoundError(absl::StrCat("environment variable ", name, " is not set"));
  int parsed = 0;
  if (!absl::SimpleAtoi(*value, &parsed)) {
    return absl::InvalidArgumentError(absl::StrCat("environment variable ", name, "='", *value, "' is not an integer"));
  }
  return parsed;
}

absl::StatusOr<int> int_var_or(const EnvLookup& getenv, absl::string_view name, int fallback) {
  if (!getenv(name)) return fallback;
  return int_var(getenv, name);
}

// Rank within [0, size) and size positive, naming the variables otherwise.
absl::Status check_position(absl::string_view rank_name, int rank, absl::string_view size_name, int size) {
  if (size < 1) {
    return absl::InvalidArgumentError(absl::StrCat(size_name, "=", size, " must be at least 1"));
  }
  if (rank < 0 || rank >= size) {
    return absl::InvalidArgumentError(
        absl::StrCat(rank_name, "=", rank, " is outside [0, ", size_name, "=", size, ")"));
  }
  return absl::OkStatus();
}

absl::Status read_master(const EnvLookup& getenv, LaunchEnvironment& env) {
  if (std::optional<std::string> addr = getenv("MASTER_ADDR")) env.master_addr = *addr;
  ASSIGN_OR_RETURN(env.master_port, int_var_or(getenv, "MASTER_PORT", kDefaultMasterPort));
  if (env.master_port <= 0 || env.master_port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("MASTER_PORT=", env.master_port, " is not a TCP port"));
  }
  return absl::OkStatus();
}

absl::StatusOr<LaunchEnvironment> from_open_mpi(const EnvLookup& getenv) {
  LaunchEnvironment env;
  env.source = LaunchEnvironment::Source::kOpenMpi;
  ASSIGN_OR_RETURN(env.rank, int_var(getenv, "OMPI_COMM_WORLD_RANK"));
  ASSIGN_OR_RETURN(env.world_size, int_var(getenv, "OMPI_COMM_WORLD_SIZE"));
  ASSIGN_OR_RETURN(env.local_rank, int_var(getenv, "OMPI_COMM_WORLD_LOCAL_RANK"));
  ASSIGN_OR_RETURN(env.local_size, int_var(getenv, "OMPI_COMM_WORLD_LOCAL_SIZE"));
  RETURN_IF_ERROR(read_master(getenv, env));
  return env;
}

absl::StatusOr<LaunchEnvironment> from_slurm(const EnvLookup& getenv) {
  LaunchEnvironment env;
  env.source = LaunchEnvironment::Source::kSlurm;
  ASSIGN_OR_RETURN(env.rank, int_var(getenv, "SLURM_PROCID"));
  ASSIGN_OR_RETURN(env.world_size, int_var(getenv, "SLURM_NTASKS"));
  ASSIGN_OR_RETURN(env.local_rank, int_var_or(getenv, "SLURM_LOCALID", 0));
  if (std::optional<std::string> per_node = getenv("SLURM_TASKS_PER_NODE")) {
    ASSIGN_OR_RETURN(int node_id, int_var_or(getenv, "SLURM_NODEID", 0));
    ASSIGN_OR_RETURN(env.local_size, slurm_tasks_on_node(*per_node, node_id));
  } else {
    ASSIGN_OR_RETURN(env.local_size, int_var_or(getenv, "SLURM_NTASKS_PER_NODE", env.world_size));
  }
  RETURN_IF_ERROR(read_master(getenv, env));
  if (env.master_addr.empty()) {
    std::optional<std::string> nodes = getenv("SLURM_JOB_NODELIST");
    if (!nodes) nodes = getenv("SLURM_NODELIST");
    if (nodes) {
      ASSIGN_OR_RETURN(env.master_addr, first_slurm_host(*nodes));
    }
  }
  return env;
}

absl::StatusOr<LaunchEnvironment> from_plain(const EnvLookup& getenv) {
  LaunchEnvironment env;
  env.source = LaunchEnvironment::Source::kPlain;
  ASSIGN_OR_RETURN(env.rank, int_var(getenv, "RANK"));
  ASSIGN_OR_RETURN(env.world_size, int_var(getenv, "WORLD_SIZE"));
  ASSIGN_OR_RETURN(env.local_rank, int_var_or(getenv, "LOCAL_RANK", env.rank));
  // torchrun's name first, then the shorter one some launchers use.
  if (getenv("LOCAL_WORLD_SIZE")) {
    ASSIGN_OR_RETURN(env.local_size, int_var(getenv, "LOCAL_WORLD_SIZE"));
  } else {
    ASSIGN_OR_RETURN(env.local_size, int_var_or(getenv, "LOCAL_SIZE", env.world_size));
  }
  RETURN_IF_ERROR(read_master(getenv, env));
  return env;
}

}  // namespace

absl::string_view source_name(LaunchEnvironment::Source source) {
  switch (source) {
    case LaunchEnvironment::Source::kSingleProcess:
      return "single process";
    case LaunchEnvironment::Source::kOpenMpi:
      return "open mpi";
    case LaunchEnvironment::Source::kSlurm:
      return "slurm";
    case LaunchEnvironment::Source::kPlain:
      return "RANK/WORLD_SIZE";
  }
  return "?";
}

absl::StatusOr<LaunchEnvironment> discover_environment(const EnvLookup& getenv) {
  using Source = LaunchEnvironment::Source;
  Source source = Source::kSingleProcess;
  // torchrun marks its workers with TORCHELASTIC_RUN_ID: started by srun,
  // they carry the srun task's Slurm variables too, and its rank is not
  // theirs.
  const bool torchrun = getenv("TORCHELASTIC_RUN_ID").has_value() && (getenv("RANK") || getenv("WORLD_SIZE"));
  if (getenv("OMPI_COMM_WORLD_RANK")) {
    source = Source::kOpenMpi;
  } else if (torchrun) {
    source = Source::kPlain;
  } else if (getenv("SLURM_PROCID") && getenv("SLURM_NTASKS")) {
    source = Source::kSlurm;
  } else if (getenv("RANK") || getenv("WORLD_SIZE")) {
    source = Source::kPlain;
  }
  absl::StatusOr<LaunchEnvironment> env;
  switch (source) {
    case Source::kOpenMpi:
      env = from_open_mpi(getenv);
      break;
    case Source::kSlurm:
      env = from_slurm(getenv);
      break;
    case Source::kPlain:
      env = from_plain(getenv);
      break;
    case Source::kSingleProcess:
      env = LaunchEnvironment{};
      if (absl::Status s = read_master(getenv, *env); !s.ok()) env = s;
      break;
  }
  if (!env.ok()) {
    return absl::Status(env.status().code(),
                        absl::StrCat("rank discovery (", source_name(source), "): ", env.status().message()));
  }
  RETURN_IF_ERROR(check_position("rank", env->rank, "world size", env->world_size));
  RETURN_IF_ERROR(check_position("local rank", env->local_rank, "local size", env->local_size));
  if (env->local_size > env->world_size) {
    return absl::InvalidArgumentError(absl::StrCat("rank discovery (", source_name(env->source), "): local size ",
                                                   env->local_size, " exceeds world size ", env->world_size));
  }
  return env;
}

absl::StatusOr<LaunchEnvironment> discover_environment() {
  return discover_environment([](absl::string_view name) -> std::optional<std::string> {
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  });
}

absl::StatusOr<std::string> first_slurm_host(absl::string_view nodelist) {
  // The first entry ends at a comma outside brackets.
  size_t end = 0;
  int depth = 0;
  for (; end < nodelist.size(); ++end) {
    if (nodelist[end] == '[') ++depth;
    if (nodelist[end] == ']') --depth;
    if (nodelist[end] == ',' && depth == 0) break;
  }
  absl::string_view first = nodelist.substr(0, end);
  const size_t open = first.find('[');
  if (first.empty() || (open != absl::string_view::npos && first.back() != ']')) {
    return absl::InvalidArgumentError(absl::StrCat("cannot read Slurm node list '", nodelist, "'"));
  }
  if (open == absl::string_view::npos) return std::string(first);
  // "prefix[03-05,9]": the first number of the range keeps its zero padding.
  absl::string_view range = first.substr(open + 1, first.size() - open - 2);
  absl::string_view low = range.substr(0, range.find_first_of(",-"));
  if (low.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot read Slurm node list '", nodelist, "'"));
  }
  return absl::StrCat(first.substr(0, open), low);
}

absl::StatusOr<int> slurm_tasks_on_node(absl::string_view tasks_per_node, int node_id) {
  int node = 0;
  for (absl::string_view part : absl::StrSplit(tasks_per_node, ',')) {
    int count = 0;
    int repeat = 1;
    const size_t x = part.find("(x");
    const bool ok = absl::SimpleAtoi(part.substr(0, x), &count) &&
                    (x == absl::string_view::npos ||
                     (part.back() == ')' && absl::SimpleAtoi(part.substr(x + 2, part.size() - x - 3), &repeat)));
    if (!ok || count < 1 || repeat < 1) {
      return absl::InvalidArgumentError(absl::StrCat("SLURM_TASKS_PER_NODE='", tasks_per_node, "' cannot be read"));
    }
    if (node_id < node + repeat) return count;
    node += repeat;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("SLURM_TASKS_PER_NODE='", tasks_per_node, "' lists ", node, " nodes, not node ", node_id));
}

}  // namespace ts::collectives
