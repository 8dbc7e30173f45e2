"""The module-level team verbs and the reductions by name, under the real launcher
(programs/team_names.py): splits, configs, contexts, syncs and destroys on the team of
even PEs, and or/xor/min/prod_reduce over the world and that team."""

import pytest

from conftest import assert_ok, run_pes


@pytest.mark.parametrize("npes", [1, 3, 4])
def test_team_verbs_and_reductions_by_name(npes):
    proc = run_pes("team_names.py", npes, timeout=120)
    assert_ok(proc, npes)
