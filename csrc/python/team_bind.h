// python/team_bind.h: registers the team functions on the _C module (team_bind.cpp).
#pragma once

#include <pybind11/pybind11.h>

namespace pyshmem {
namespace py {
void team_bind(pybind11::module_& m);
}  // namespace py
}  // namespace pyshmem
