# SPDX-License-Identifier: Apache-2.0
import zlib

import pytest

from tlsbench import spec


def test_labels_and_enums_come_from_the_files():
    s = spec.load()
    raw = (spec.SPEC_DIR / spec.LABELS_FILE).read_bytes()
    assert s.labels_crc32 == zlib.crc32(raw)
    assert all(s.label_by_id[l.id] is l for l in s.labels)
    assert len(s.label_by_name) == len(s.labels)  # names are unique
    assert set(s.label_ids("step")) <= set(s.label_by_id)
    assert s.frames.name(s.frames.REP) == "REP"
    assert s.flags.by_name[next(iter(s.flags))] == 1  # masks, not bit numbers


def test_name_table_errors_list_allowed_values():
    with pytest.raises(KeyError, match="allowed: .*x25519"):
        spec.load().groups.value("curve25519")


def test_agent_built_from_other_specs_is_refused():
    s = spec.load()
    hello = {"agent": "a", "labels_crc32": s.labels_crc32 ^ 1, "protocol_crc32": s.protocol_crc32,
             "protocol": s.protocol_version}
    with pytest.raises(spec.SpecMismatch, match="rebuild it with make"):
        s.check_agent(hello)
    s.check_agent(dict(hello, labels_crc32=s.labels_crc32))
