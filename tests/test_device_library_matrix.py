# SPDX-License-Identifier: Apache-2.0
"""A cores × library builds × suites matrix in one experiment: `[device] target` and `library`
both lists, one lane per target × build (each build's firmware lists its own suites), every
configuration keyed and exported by target, core and build, and `tlsbench matrix` showing one
column per target × build. The real firmware under real QEMU; about 20 s with the images built
(the first time about 40 s per target and build)."""
from __future__ import annotations

import json
import shutil

import pytest

from tlsbench import plan
from tlsbench.app.matrix import device_matrix
from tlsbench.app.run import run_experiment
from tlsbench.core.errors import UserError
from tlsbench.export import tidy
from stores import reader

TARGETS = {"qemu-cortex-m0": "cortex-m0", "qemu-mps2-an386": "cortex-m4"}
BUILDS = ["mbedtls@2.28", "mbedtls@3.6"]
PSK = "TLS-PSK-WITH-AES-128-CCM-8"


def matrix_plan(name: str = "builds", extra: str = "") -> plan.LoadedPlan:
    return plan.parse(f'name = "{name}"\nsuites = ["{PSK}"]\nrepetitions = 2\n'
                      f'[device]\ntarget = {json.dumps(list(TARGETS))}\nlibrary = {json.dumps(BUILDS)}\n{extra}',
                      f"{name}.toml")


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    if shutil.which("qemu-system-arm") is None:
        pytest.fail("these tests need qemu-system-arm: scripts/install-deps.sh installs it")
    out = tmp_path_factory.mktemp("builds")
    summary = run_experiment(matrix_plan(), out)
    assert summary.failed == 0 and summary.stored == 2 * len(TARGETS) * len(BUILDS)
    return out / "builds"


def test_every_target_runs_every_build_keyed_by_both(stored):
    with reader(stored / "tlsbench.db") as st:
        configs = st.config_rows()
        agents = st.agent_rows()
        rows = tidy.read_table(st, "repetition").to_pylist()
    labels = {"mbedtls@2.28": "mbedtls", "mbedtls@3.6": "mbedtls@3.6"}  # the builds' labels (spec/libraries.toml)
    places = {(c.target, c.library) for c in configs}
    assert places == {(t, labels[b]) for t in TARGETS for b in BUILDS} and len({c.key for c in configs}) == 4
    # One lane per target × build: each booted its own firmware (plus the boot that listed its suites).
    assert sorted((a.target, a.library) for a in agents) == sorted([*places, *places])
    exported = {(r["target"], r["core"], r["library"]): r["library_version"] for r in rows}
    assert set(exported) == {(t, core, labels[b]) for t, core in TARGETS.items() for b in BUILDS}
    assert all(version.startswith("2.28." if library == "mbedtls" else "3.6.")
               for (_, _, library), version in exported.items())


def test_the_matrix_has_a_column_per_target_and_build(stored):
    m = device_matrix([stored])
    assert sorted((c.target, c.library) for c in m.columns) == sorted(
        (t, lib) for t in TARGETS for lib in ("mbedtls", "mbedtls@3.6"))
    row = next(r for r in m.rows if r.startswith(PSK))
    counts = [m.cells[(row, i)].count["client"] for i in range(len(m.columns))]
    assert len(set(counts)) == 4  # another core or another build: another count
    assert sorted(m.ranks(row, "client").values()) == [1, 2, 3, 4]


def test_several_builds_take_no_single_config_header():
    with pytest.raises(UserError, match="one library config header for one library build"):
        matrix_plan("bad", 'config = "agent/configs/mbedtls/device-mps2.h"\n')


def test_one_build_hashes_as_before_the_list():
    """A plan naming one build, as a string or a list of one, hashes as plans did before the
    list (their stores still resume); a second build is another plan."""
    text = 'name = "x"\nsuites = ["{}"]\n[device]\ntarget = "qemu-cortex-m0"\nlibrary = {}\n'
    one, listed, two = (plan.parse(text.format(PSK, lib), "x.toml").plan
                        for lib in ('"mbedtls@3.6"', '["mbedtls@3.6"]', json.dumps(BUILDS)))
    assert json.loads(one.resolved_json())["device"]["library"] == "mbedtls@3.6"
    assert one.hash() == listed.hash() != two.hash()
