# SPDX-License-Identifier: Apache-2.0
"""Configuration kinds are declared once (schema/kinds.py): the kind a configuration's columns
make in Python, the store's SQL selection of the same columns and the route its batches take
all come from that table, so they cannot disagree."""
from __future__ import annotations

import dataclasses

import pytest

from tlsbench.core import spec
from tlsbench.plan.configs import Configuration
from tlsbench.schema.kinds import COLUMNS, SELECTIONS, ConfigKind
from tlsbench.run.topologies import OVER_NETWORK, host_agent, on_device, route
from tlsbench.schema import ConfigRow, Experiment
from tlsbench.store.sqlite.store import _all_of, _any_of

from stores import writer

BASE = ConfigRow("k", "mbedtls", 0xC02B, "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", "ECDHE", "ECDSA", "AES-128-GCM",
                 "SHA256", "TLS1.2", "TLS1.2", "default", "ecdsa-p256", "memory", "none", 0, 1024, 10)
# One configuration of each kind, as the plan's resolution makes them.
COLUMNS_OF = {
    ConfigKind.HANDSHAKE: {},
    ConfigKind.NETWORK: {"network_json": "{}", "device_role": "client", "peer_library": "mbedtls", "link_label": "lo"},
    ConfigKind.EXPERIMENT: {"experiment": "sha256", "experiment_source": "primitive"},
    ConfigKind.INSTRUCTIONS: {"collect": "instructions"},
    ConfigKind.MEMORY: {"collect": "memory"},
    ConfigKind.DEVICE: {"target": "qemu-mps2-an386", "image": "counting"},
    ConfigKind.FOOTPRINT: {"target": "qemu-mps2-an386", "image": "memory"},
    ConfigKind.DEVICE_EXPERIMENT: {"experiment": "ecdsa-p256", "experiment_source": "primitive",
                                   "target": "qemu-mps2-an386"},
}
ROWS = {kind: dataclasses.replace(BASE, key=kind.value, **columns) for kind, columns in COLUMNS_OF.items()}


def test_every_kind_has_an_example_and_reads_back():
    assert set(ROWS) == set(ConfigKind) == set(COLUMNS)
    assert {kind: row.kind for kind, row in ROWS.items()} == {kind: kind for kind in ConfigKind}


def test_the_stores_selections_hold_the_kinds_they_name(tmp_path):
    with writer(tmp_path / "exp") as st:
        st.init_experiment(Experiment("exp", "", "{}", "h", 1, "{}"))
        for row in ROWS.values():
            st.upsert_config(row)
        for selection, kinds in SELECTIONS.items():
            stored = st.config_rows(selection)  # type: ignore[arg-type]
            assert sorted(c.key for c in stored) == sorted(k.value for k in kinds), selection
            assert all(c.kind in kinds for c in stored)
        assert len(st.config_rows("all")) == len(ConfigKind)
    listed = [k for kinds in SELECTIONS.values() for k in kinds]
    assert len(listed) == len(set(listed)) == len(ConfigKind)  # each kind in one selection


@pytest.mark.parametrize("columns,expected", [
    (set(), {"handshakes": "", "experiments": "0", "device": "0", "footprint": "0", "instructions": "0"}),  # before 003
    ({"experiment", "network_json"}, {"experiments": "experiment IS NOT NULL", "device": "0", "memory": "0"}),  # 004
])
def test_an_older_schema_reads_missing_columns_as_null(columns, expected):
    """"" selects every row, "0" none: a kind needing a column the schema lacks has no row."""
    for selection, sql in expected.items():
        assert _any_of([_all_of(COLUMNS[k], columns) for k in SELECTIONS[selection]]) == sql, selection


def test_routes_follow_the_kind():
    configs = {kind: Configuration(row, 0xC02B, 0, 0, 0, 0) for kind, row in ROWS.items()}
    device, library = configs[ConfigKind.DEVICE].row.target, configs[ConfigKind.DEVICE].row.library
    assert route(configs[ConfigKind.DEVICE]) == route(configs[ConfigKind.FOOTPRINT]) == on_device(device, library)
    experiment = configs[ConfigKind.DEVICE_EXPERIMENT].row
    assert route(configs[ConfigKind.DEVICE_EXPERIMENT]) == on_device(experiment.target, experiment.library)
    row = configs[ConfigKind.DEVICE].row
    other = dataclasses.replace(configs[ConfigKind.DEVICE], row=dataclasses.replace(row, target="qemu-cortex-m0"))
    assert route(other) == on_device("qemu-cortex-m0", library) != on_device(device, library)  # one exchange per target
    build = dataclasses.replace(configs[ConfigKind.DEVICE], row=dataclasses.replace(row, library="wolfssl@5.7"))
    assert route(build) == on_device(device, "wolfssl@5.7") != on_device(device, library)  # and per library build
    assert route(configs[ConfigKind.NETWORK]) == OVER_NETWORK
    assert route(configs[ConfigKind.HANDSHAKE]) == route(configs[ConfigKind.EXPERIMENT]) == host_agent("mbedtls")
    assert route(configs[ConfigKind.INSTRUCTIONS]) == host_agent("mbedtls", "instructions")
    assert route(configs[ConfigKind.MEMORY]) != route(configs[ConfigKind.INSTRUCTIONS])
    assert {k.collect for k in ConfigKind if k.collect} <= set(spec.load().collects.names)
