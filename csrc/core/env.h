// core/env.h: typed view of the PYSHMEM_* environment variables (table: env_vars.def).
#pragma once

#include <string>
#include <vector>
#include <cstddef>

namespace pyshmem {

using env_size = size_t;
using env_int = long long;
using env_bool = bool;
using env_float = double;
using env_str = std::string;

struct Config {
#define X(FIELD, TYPE, DEFAULT, HELP) env_##TYPE FIELD;
#include "core/env_vars.def"
#undef X
};

// One row of the table, with the value currently in the environment (if set).
struct EnvVarInfo {
  std::string name, type, default_value, help;
  bool is_set;
  std::string value;
};

// Parses every PYSHMEM_* variable of the table. Throws Error(INVALID_ARG) naming the
// variable and the accepted syntax when a value does not parse.
Config config_from_env();

std::vector<EnvVarInfo> env_table();

// Parses "1G", "512M", "4096" ... into bytes; throws on garbage. Exposed for tests.
size_t parse_size(const std::string& name, const std::string& text);

}  // namespace pyshmem
