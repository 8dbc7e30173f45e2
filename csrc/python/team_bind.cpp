// python/team_bind.cpp: team management for pyshmem/team.py (handles are ints; the
// Team class lives in Python). Splits run with the GIL released: they wait for peers.
#include <pybind11/pybind11.h>

#include "python/team_bind.h"
#include "pyshmem/team.h"
#include "team/team.h"

namespace pybind = pybind11;

namespace pyshmem {
namespace py {

void team_bind(pybind::module_& m) {
  m.attr("TEAM_WORLD") = int(PYSHMEM_TEAM_WORLD);
  m.attr("TEAM_SHARED") = int(PYSHMEM_TEAM_SHARED);
  m.attr("TEAM_INVALID") = int(PYSHMEM_TEAM_INVALID);
  m.def("team_my_pe", &team_index_of_me);
  m.def("team_n_pes", &team_size_of);
  m.def("team_check", [](int team, const char* call) { team_desc(team, call); });
  m.def("team_translate_pe", &team_translate_pe);
  m.def("team_get_config", [](int team, const char* call) { return team_get_config(team, call).num_contexts; });
  m.def("team_triplet", [](int team, const char* call) {
    const pyshmem_team_desc& d = team_desc(team, call);
    return pybind::make_tuple(d.start, d.stride, d.size);
  });
  m.def(
      "team_split_strided",
      [](int parent, int start, int stride, int size, int num_contexts, long mask, const char* call) {
        TeamConfig c;
        c.num_contexts = num_contexts;
        return team_split_strided(parent, start, stride, size, c, mask, call);
      },
      pybind::call_guard<pybind::gil_scoped_release>());
  m.def(
      "team_split_2d",
      [](int parent, int xrange, int xnum, long xmask, int ynum, long ymask, const char* call) {
        TeamConfig xc, yc;
        xc.num_contexts = xnum;
        yc.num_contexts = ynum;
        int x = PYSHMEM_TEAM_INVALID, y = PYSHMEM_TEAM_INVALID;
        team_split_2d(parent, xrange, xc, xmask, yc, ymask, &x, &y, call);
        return std::make_pair(x, y);
      },
      pybind::call_guard<pybind::gil_scoped_release>());
  m.def("team_split_reject", &team_split_reject, pybind::call_guard<pybind::gil_scoped_release>(),
        "Collective over the parent: take part in a split this PE rejected, so the others fail too.");
  m.def("team_destroy", &team_destroy);
  m.def("team_count", &team_count);
}

}  // namespace py
}  // namespace pyshmem
