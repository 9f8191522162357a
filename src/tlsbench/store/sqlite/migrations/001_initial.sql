-- SPDX-License-Identifier: Apache-2.0
-- One SQLite file per experiment. Raw trace records are kept exactly as the agent sent
-- them; everything else analysis needs is derived and can be rebuilt. Times: integer ns.

CREATE TABLE experiment (
    id          INTEGER PRIMARY KEY CHECK (id = 1),  -- one experiment per file
    name        TEXT NOT NULL,
    created_at  TEXT NOT NULL,     -- ISO-8601 UTC
    plan_toml   TEXT NOT NULL,     -- the plan as the user wrote it
    plan_json   TEXT NOT NULL,     -- the fully resolved plan (defaults filled in)
    plan_hash   TEXT NOT NULL,     -- sha256 of plan_json: only the same plan may resume here
    seed        INTEGER NOT NULL,  -- schedule shuffle seed
    host_json   TEXT NOT NULL      -- host name, kernel, CPU model, Python, tlsbench version
);

-- One row per agent process started (a restart after a crash is a new row).
CREATE TABLE agent (
    id           INTEGER PRIMARY KEY,
    library      TEXT NOT NULL,    -- backend name: mbedtls, openssl, wolfssl
    executable   TEXT NOT NULL,    -- file name of the agent binary (no directory)
    pid          INTEGER,          -- its process id (lets tests and operators find it)
    hello_json   TEXT NOT NULL,    -- the HELLO frame verbatim (version, build, clock, tracer calibration)
    suites_json  TEXT NOT NULL,    -- the SUITES frame verbatim
    started_at   TEXT NOT NULL,
    ended_at     TEXT,
    exit_reason  TEXT              -- 'quit', or why it died
);

-- One measured configuration: what a RUN request carries, plus the suite's metadata.
CREATE TABLE config (
    id              INTEGER PRIMARY KEY,
    key             TEXT NOT NULL UNIQUE,  -- canonical text of the fields below; stable across resumes
    library         TEXT NOT NULL,
    suite_id        INTEGER NOT NULL,      -- IANA
    suite_name      TEXT NOT NULL,
    key_exchange    TEXT NOT NULL,
    authentication  TEXT NOT NULL,
    cipher          TEXT NOT NULL,
    mac             TEXT NOT NULL,
    min_version     TEXT NOT NULL,
    max_version     TEXT NOT NULL,
    grp             TEXT NOT NULL,         -- spec [group] name ('default' resolved by the agent)
    credential      TEXT NOT NULL,         -- spec [credential] name, 'auto' resolved to the agent's pick
    transport       TEXT NOT NULL,         -- spec [transport] name
    direction       TEXT NOT NULL,         -- spec [direction] name
    total_bytes     INTEGER NOT NULL,      -- application bytes per direction
    record_size     INTEGER NOT NULL,
    repetitions     INTEGER NOT NULL,      -- planned
    options         INTEGER NOT NULL DEFAULT 0,  -- RUN options bits (spec/protocol.toml [options])
    skip_reason     TEXT                   -- NULL while runnable; why the controller stopped running it
                                           -- (agent ERROR 'unsupported', or given up after repeated agent deaths)
);

-- One repetition: stored in one transaction together with its trace.
CREATE TABLE repetition (
    id                 INTEGER PRIMARY KEY,
    config_id          INTEGER NOT NULL REFERENCES config(id),
    idx                INTEGER NOT NULL,   -- 0 .. repetitions-1 within the config
    round              INTEGER NOT NULL,
    agent_id           INTEGER REFERENCES agent(id),
    status             TEXT NOT NULL,      -- spec [status] name
    failed_peer        TEXT,               -- client / server, NULL when none
    error_code         INTEGER NOT NULL DEFAULT 0,
    error_text         TEXT,
    flags              INTEGER NOT NULL DEFAULT 0,  -- spec [flags] bits
    bytes_c2s          INTEGER,
    bytes_s2c          INTEGER,
    start_ns           INTEGER,            -- agent's monotonic clock
    handshake_wall_ns  INTEGER,            -- measured by the agent's runner, both peers
    handshake_cpu_ns   INTEGER,
    n_events           INTEGER NOT NULL,
    dropped_events     INTEGER NOT NULL DEFAULT 0,
    stored_at          TEXT NOT NULL,
    UNIQUE (config_id, idx)
);
CREATE INDEX repetition_by_round ON repetition(round);

-- Raw trace records of a repetition: n_events × 32 bytes, the wire layout of
-- docs/protocol.md (little-endian: u16 label, u8 kind, u8 peer, u32 seq, u64 t_ns,
-- u64 cpu_ns, u64 value). One blob per repetition ingests and loads at memory speed;
-- analysis decodes it with numpy and derives the `slice` table from it.
CREATE TABLE trace (
    repetition_id  INTEGER PRIMARY KEY REFERENCES repetition(id),
    records        BLOB NOT NULL
);
