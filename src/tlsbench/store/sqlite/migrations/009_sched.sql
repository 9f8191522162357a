-- SPDX-License-Identifier: Apache-2.0
-- The scheduler's view (plan metrics = [..., "sched"]; run/sched.py, docs/host.md).
-- Rows exist only where it was measured: a repetition without a sched_repetition row was
-- not traced (no root, no tracefs, events lost), never "zero switches".

-- One row per `tlsbench run` of a plan that asked for it (a resume adds one).
CREATE TABLE sched_capture (
    id          INTEGER PRIMARY KEY,
    started_at  TEXT NOT NULL,
    missing     TEXT,              -- why tracefs gave nothing (NULL: traced)
    facts_json  TEXT NOT NULL      -- CPUs traced, softirq traced, events read, events the kernel lost
);

-- A repetition as the scheduler saw its measuring agent (times: CLOCK_MONOTONIC ns, µs resolution).
CREATE TABLE sched_repetition (
    config_id          INTEGER NOT NULL REFERENCES config(id),
    idx                INTEGER NOT NULL,
    capture_id         INTEGER NOT NULL REFERENCES sched_capture(id),
    wall_ns            INTEGER NOT NULL,  -- REPETITION span
    busy_ns            INTEGER NOT NULL,  -- the agent on a CPU
    idle_ns            INTEGER NOT NULL,  -- the traced CPUs idle, summed over them
    cpus               INTEGER NOT NULL,  -- how many CPUs were traced (the agents')
    voluntary          INTEGER NOT NULL,  -- switches away from the agent: it blocked
    involuntary        INTEGER NOT NULL,  -- ... it was preempted
    wait_ns            INTEGER NOT NULL,  -- runnable but not running
    longest_run_ns     INTEGER NOT NULL,  -- longest uninterrupted run inside the repetition
    runs               INTEGER NOT NULL,  -- uninterrupted runs inside it
    inferred           INTEGER NOT NULL,  -- switch-ins the trace missed, dated from the agent's records
    steps              INTEGER NOT NULL,  -- step spans
    steps_interrupted  INTEGER NOT NULL,  -- ... with a switch or a wait (rows in sched_step)
    softirq_agent_ns   INTEGER,           -- network softirqs in an agent's context (NULL: not traced)
    softirq_other_ns   INTEGER,           -- ... in other contexts on the agents' CPUs
    PRIMARY KEY (config_id, idx)
);

-- The steps the scheduler interrupted (a step without a row ran uninterrupted, if its
-- repetition has a sched_repetition row).
CREATE TABLE sched_step (
    config_id       INTEGER NOT NULL,
    idx             INTEGER NOT NULL,
    peer            TEXT NOT NULL,
    label           TEXT NOT NULL,
    occurrence      INTEGER NOT NULL,     -- 1 for the first span of that label and peer
    voluntary       INTEGER NOT NULL,
    involuntary     INTEGER NOT NULL,
    wait_ns         INTEGER NOT NULL,
    longest_run_ns  INTEGER NOT NULL,
    PRIMARY KEY (config_id, idx, peer, label, occurrence)
);

-- Per agent process, from /proc (no root needed): totals since it started, last read after a batch.
CREATE TABLE sched_agent (
    agent_id     INTEGER PRIMARY KEY REFERENCES agent(id),
    run_ns       INTEGER NOT NULL,   -- schedstat, summed over its threads
    wait_ns      INTEGER NOT NULL,
    timeslices   INTEGER NOT NULL,
    voluntary    INTEGER NOT NULL,   -- status voluntary_ctxt_switches
    involuntary  INTEGER NOT NULL
);
