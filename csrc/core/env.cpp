#include "core/env.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace pyshmem {
namespace {

[[noreturn]] void bad_value(const std::string& name, const std::string& text, const char* expected) {
  fail_inner(PYSHMEM_ERR_INVALID_ARG, nullptr,
             "environment variable " + name + "='" + text + "' is not " + expected +
                 "; fix or unset it (python -m pyshmem info lists every variable)");
}

env_int parse_int(const std::string& name, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno || end == text.c_str() || *end != '\0') bad_value(name, text, "an integer");
  return v;
}

env_bool parse_bool(const std::string& name, const std::string& text) {
  static const char* yes[] = {"1", "y", "yes", "true", "on"};
  static const char* no[] = {"0", "n", "no", "false", "off", ""};
  for (const char* y : yes) if (strcasecmp(text.c_str(), y) == 0) return true;
  for (const char* n : no) if (strcasecmp(text.c_str(), n) == 0) return false;
  bad_value(name, text, "a boolean (1/0, yes/no, true/false, on/off)");
}

env_float parse_float(const std::string& name, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (errno || end == text.c_str() || *end != '\0' || !std::isfinite(v)) bad_value(name, text, "a number");
  return v;
}

env_str parse_str(const std::string&, const std::string& text) { return text; }

std::string full_name(const char* field) { return std::string("PYSHMEM_") + field; }

}  // namespace

size_t parse_size(const std::string& name, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (errno || end == text.c_str() || !(v >= 0) || !std::isfinite(v))
    bad_value(name, text, "a byte size such as 4096, 512M or 2G");
  double mult = 1;
  std::string suffix(end);
  if (suffix.size() > 1 && (suffix.back() == 'B' || suffix.back() == 'b')) suffix.pop_back();
  if (suffix.size() > 1 && (suffix.back() == 'i')) suffix.pop_back();
  if (suffix.empty()) mult = 1;
  else if (suffix == "K" || suffix == "k") mult = 1024.0;
  else if (suffix == "M" || suffix == "m") mult = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "g") mult = 1024.0 * 1024 * 1024;
  else if (suffix == "T" || suffix == "t") mult = 1024.0 * 1024 * 1024 * 1024;
  else bad_value(name, text, "a byte size such as 4096, 512M or 2G");
  if (v * mult >= 9.0e18) bad_value(name, text, "a byte size below 8 EiB");
  return static_cast<size_t>(v * mult);
}

namespace {
env_size parse_size_field(const std::string& name, const std::string& text) { return parse_size(name, text); }
}  // namespace

Config config_from_env() {
  Config c;
#define X(FIELD, TYPE, DEFAULT, HELP)                                    \
  {                                                                      \
    const std::string name = full_name(#FIELD);                          \
    const char* v = std::getenv(name.c_str());                           \
    c.FIELD = parse_##TYPE##_any(name, v ? std::string(v) : DEFAULT);    \
  }
#define parse_size_any parse_size_field
#define parse_int_any parse_int
#define parse_bool_any parse_bool
#define parse_float_any parse_float
#define parse_str_any parse_str
#include "core/env_vars.def"
#undef X
  return c;
}

std::vector<EnvVarInfo> env_table() {
  std::vector<EnvVarInfo> rows;
#define X(FIELD, TYPE, DEFAULT, HELP)                                               \
  {                                                                                 \
    const std::string name = full_name(#FIELD);                                     \
    const char* v = std::getenv(name.c_str());                                      \
    rows.push_back(EnvVarInfo{name, #TYPE, DEFAULT, HELP, v != nullptr, v ? v : ""}); \
  }
#include "core/env_vars.def"
#undef X
  return rows;
}

}  // namespace pyshmem
