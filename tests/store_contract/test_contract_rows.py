# SPDX-License-Identifier: Apache-2.0
"""What a run writes (Sink) is what a reader reads (StoreReader), column by column."""
from __future__ import annotations

import dataclasses
import json

import pytest

from store_contract.samples import DIED, FAILED, OK, config, experiment, peer, records, repetition
from tlsbench.schema import (DeviceFacts, LinkTraffic, SchedAgent, SchedBatch, SchedRepetition, SchedStep, SkippedCell,
                             StoredCapture, StoredRepetition, TraceCounts, WindowEnergies)
from tlsbench.store.api import PlanMismatch, StoreError


def test_the_experiment_is_written_once_and_another_plan_refused(where):
    assert where.stored_experiment() is None
    with where.writer() as store:
        stored = store.init_experiment(experiment())
        assert store.init_experiment(experiment()) == stored  # the same plan: resumes
        with pytest.raises(PlanMismatch, match="another plan"):
            store.init_experiment(experiment("hash-2"))
    assert stored.created_at and dataclasses.replace(stored, created_at="") == experiment()
    assert where.stored_experiment() == stored
    with where.reader() as reader:
        assert reader.experiment() == stored


def test_a_store_without_an_experiment_is_not_read(where):
    with pytest.raises(StoreError):
        where.reader()
    with where.writer():
        pass
    with pytest.raises(StoreError, match="no experiment"):
        where.reader()


def test_agents_and_devices(where):
    facts = DeviceFacts("qemu-mps2-an386", "instructions (QEMU icount)", "ab" * 32,
                        json.dumps({"variant": "counting", "file": "fw.elf", "library": "mbedtls 2.28.3",
                                    "config": {"name": "c.h", "sha256": "cd" * 32}, "text": 1, "data": 2, "bss": 3}))
    with where.writer() as store:
        store.init_experiment(experiment())
        host = store.add_agent("mbedtls", "tlsbench-agent-mbedtls", 123, '{"hello": 1}', '{"suites": []}',
                               placement_json='{"cpus": [1]}')
        board = store.add_agent("mbedtls", "fw.elf", None, "{}", "{}", device=facts)
        left = store.add_agent("openssl", "tlsbench-agent-openssl", 456, "{}", "{}")
        store.set_agent_clock(host, '{"source": "CLOCK_MONOTONIC"}')
        store.end_agent(host, "quit (exit code 0)")
        store.end_agent(board, "quit")
        assert store.close_stale_agents("host ended without closing it") == 1
    with where.reader() as reader:
        a, b, c = reader.agent_rows()
        devices = reader.devices()
    assert (a.id, a.library, a.executable, a.pid, a.hello_json, a.suites_json) == \
        (host, "mbedtls", "tlsbench-agent-mbedtls", 123, '{"hello": 1}', '{"suites": []}')
    assert (a.placement_json, a.clock_json, a.exit_reason, a.target) == \
        ('{"cpus": [1]}', '{"source": "CLOCK_MONOTONIC"}', "quit (exit code 0)", None)
    assert a.started_at and a.ended_at
    assert (b.id, b.pid) == (board, None)
    assert (b.target, b.counter_unit, b.firmware_sha256, b.firmware_json) == dataclasses.astuple(facts)
    assert (c.id, c.exit_reason) == (left, "host ended without closing it") and c.ended_at
    (image,) = devices
    assert (image.target, image.variant, image.file, image.boots, image.text) == \
        ("qemu-mps2-an386", "counting", "fw.elf", 1, 1)


def test_configurations_and_skipped_cells(where):
    with where.writer() as store:
        store.init_experiment(experiment())
        first = store.upsert_config(config("a|k"))
        second = store.upsert_config(config("b|k", experiment="sha256", experiment_source="primitive",
                                            experiment_groups='["hash"]', suite_id=0))
        assert store.upsert_config(config("a|k")) == first != second  # the key identifies it across resumes
        store.set_skip_reason(second, "unsupported: no")
        store.set_skipped_cells([SkippedCell("c|k", "group x25519 does not apply"), SkippedCell("b|z", "too big")])
        store.set_skipped_cells([SkippedCell("c|k", "group x25519 does not apply")])  # a resume resolves again
    with where.reader() as reader:
        a, b = reader.config_rows()
        assert [c.id for c in reader.config_rows("handshakes")] == [first]
        assert [c.id for c in reader.config_rows("experiments")] == [second]
        assert reader.has("handshakes") and reader.has_experiments() and not reader.has("device")
        assert reader.skipped_cells() == [SkippedCell("c|k", "group x25519 does not apply")]
    assert a.id == first and a.skip_reason is None
    assert b.key == "b|k" and b.experiment == "sha256" and b.skip_reason == "unsupported: no"
    for name in (f.name for f in dataclasses.fields(config())):
        assert getattr(a, name) == getattr(config("a|k"), name), name


def _three(store) -> tuple[int, int, list[StoredRepetition]]:
    store.init_experiment(experiment())
    agent = store.add_agent("mbedtls", "tlsbench-agent-mbedtls", 1, "{}", "{}")
    cid = store.upsert_config(config())
    batch = [StoredRepetition(repetition(cid, i, agent, OK if i != 1 else FAILED), records(3, i), peer(agent, i))
             for i in range(3)]
    store.add_repetitions(batch)
    return cid, agent, batch


def test_repetitions_traces_and_peers_read_back_column_by_column(where):
    with where.writer() as store:
        cid, agent, batch = _three(store)
        died = store.add_repetition(repetition(cid, 3, agent, DIED, round=1, records=0), b"")
    with where.reader() as reader:
        rows = reader.repetition_rows()
        ids = [i for i, _ in rows]
        assert [r for _, r in rows] == [s.row for s in batch] + [repetition(cid, 3, agent, DIED, round=1, records=0)]
        assert ids == sorted(ids) and ids[-1] == died
        assert reader.traces() == [(i, s.records) for i, s in zip(ids, batch)] + [(died, b"")]
        assert reader.traces("all", [ids[2], ids[0]]) == [(ids[0], batch[0].records), (ids[2], batch[2].records)]
        peers = reader.peer_traces()
        assert [(p.rep_id, p.agent_id, p.role, p.records) for p in peers] == \
            [(i, agent, "server", s.peer.records) for i, s in zip(ids, batch)]
        cols = reader.repetition_columns()
        for name in (f.name for f in dataclasses.fields(cols) if f.name != "id"):
            want = [getattr(r, name) for _, r in rows]
            assert getattr(cols, name).tolist() == [-1 if v is None else v for v in want], name
        assert cols.id.tolist() == ids
        row, blob = reader.repetition(cid, 2)
        assert (row["id"], row["status"], row["error_text"], blob) == (ids[2], OK, None, batch[2].records)
        assert reader.repetition(cid, 9) is None
        assert reader.stored_indices() == {config().key: {0, 1, 2, 3}}
        assert reader.repetition_counts(OK) == {cid: {"stored": 4, "failed": 2, "flagged": 1}}
        assert reader.stored_per_round() == {0: 3, 1: 1}
        assert reader.repetition_ids([config().key]) == ids


def test_a_batch_is_stored_whole_or_not_at_all(where):
    """A repetition stored twice is refused, and its batch with it: nothing of it is kept."""
    with where.writer() as store:
        cid, agent, batch = _three(store)
        again = [StoredRepetition(repetition(cid, 3, agent), records(3, 3)), batch[0]]
        with pytest.raises(Exception):
            store.add_repetitions(again)
    with where.reader() as reader:
        assert len(reader.repetition_rows()) == 3 and len(reader.traces()) == 3


def test_the_cycle_models_counts_are_stored_with_their_repetitions_or_why_not(where):
    """trace_counts (migration 018): each record's cumulative counts back exactly as written
    (stored as zstd of differences), or the reason a repetition has none; in the batch's
    transaction, so a refused batch leaves none either."""
    import numpy as np

    counts = np.array([[0, 0, 0], [40, 7, 1], [2**63 + 5, 9, 1]], "<u8")  # 3 records, 3 features
    with_counts = TraceCounts("nrf52840", "instructions,load,fetch_miss_taken", counts.tobytes())
    without = TraceCounts("nrf52840", "instructions,load,fetch_miss_taken", None, "no run of trace snapshots matches")
    with where.writer() as store:
        cid, agent, _ = _three(store)
        store.add_repetitions([StoredRepetition(repetition(cid, 3, agent), records(3, 1), counts=with_counts),
                               StoredRepetition(repetition(cid, 4, agent), records(3, 2), counts=without)])
        with pytest.raises(Exception):  # repetition 3 again: the whole batch refused, its counts too
            store.add_repetitions([StoredRepetition(repetition(cid, 5, agent), records(3, 3), counts=with_counts),
                                   StoredRepetition(repetition(cid, 3, agent), records(3, 3))])
    with where.reader() as reader:
        ids = {r.idx: i for i, r in reader.repetition_rows()}
        assert reader.trace_counts() == {ids[3]: with_counts, ids[4]: without}


def test_link_traffic_by_repetition_index(where):
    traffic = {0: LinkTraffic(*range(10, 20)), 2: LinkTraffic(*range(20, 30))}
    with where.writer() as store:
        cid, _, _ = _three(store)
        store.add_link_traffic(cid, traffic)
        store.add_link_traffic(cid, {2: LinkTraffic(*range(30, 40))})  # a repeat replaces
    with where.reader() as reader:
        ids = [i for i, _ in reader.repetition_rows()]
        assert reader.link_traffic() == {ids[0]: traffic[0], ids[2]: LinkTraffic(*range(30, 40))}


def test_an_energy_capture_replaces_the_one_stored(where):
    capture = StoredCapture(0, "c.csv", "generic", "ef" * 32, "{}", "D0", 1000, 1e-5, 0.0, 0.01, "option", 3.3,
                            0.002, "option", 123, 0.5, 1.000001, 1e-6, 2e-6, 6, 0, "")
    with where.writer() as store:
        _, _, _ = _three(store)
        ids = [i for i, _ in store.repetition_rows()]
        energies = WindowEnergies(ids, ["client", "server", "none"], [1, 2, 3], [-1, -1, 0], [1e-3, 2e-3, 3e-3],
                                  [100.0, 200.0, 300.0], [1, 1, 2])
        store.save_capture(capture, energies)
        second = store.save_capture(dataclasses.replace(capture, file_name="d.csv"), energies)
    with where.reader() as reader:
        stored = reader.energy_capture()
        assert stored.id == second and stored.file_name == "d.csv" and stored.imported_at  # one capture: the last
        assert dataclasses.replace(stored, id=0, file_name="c.csv", imported_at="") == capture
        assert reader.window_energies(second) == energies


def test_the_schedulers_tables(where):
    with where.writer() as store:
        cid, agent, _ = _three(store)
        capture = store.start_sched_capture(None, '{"cpus": [1]}')
        batch = SchedBatch([SchedRepetition(cid, 0, 100, 90, 5, 1, 2, 1, 3, 40, 4, 0, 12, 1, None, None)],
                           [SchedStep(cid, 0, "client", "CLIENT_HELLO", 1, 1, 0, 3, 20)],
                           [SchedAgent(agent, 9, 8, 7, 6, 5)])
        store.add_sched(capture, batch, '{"cpus": [1], "lost": 0}')
    with where.reader() as reader:
        tables = reader.sched_tables()
    (c,) = tables.captures
    assert (c.id, c.missing, c.facts_json) == (capture, None, '{"cpus": [1], "lost": 0}') and c.started_at
    assert (tables.repetitions, tables.steps, tables.agents) == (batch.repetitions, batch.steps, batch.agents)


def test_a_reader_opened_again_reads_the_same_and_what_was_committed_since(where):
    with where.writer() as store:
        cid, agent, _ = _three(store)
        with where.reader() as reader, reader.reopened() as again:
            assert again.repetition_rows() == reader.repetition_rows()
            store.add_repetition(repetition(cid, 3, agent), records(1, 9))
            assert len(again.repetition_rows()) == len(reader.repetition_rows()) == 4
        assert store.integrity_check() == "ok"
