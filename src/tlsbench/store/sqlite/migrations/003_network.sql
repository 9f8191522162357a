-- SPDX-License-Identifier: Apache-2.0
-- Two-process runs (docs/networks.md): the device agent's REP is the `repetition` row and
-- its `trace`, as before; the peer agent's REP of the same repetition is kept next to it,
-- and so is what the link emulator carried for that repetition's connection.

-- The network half of a configuration; NULL for in-memory configurations.
ALTER TABLE config ADD COLUMN network_json TEXT;   -- tlsbench.network.plan.Variant.describe()
ALTER TABLE config ADD COLUMN device_role TEXT;    -- client / server: the peer the plan's library plays
ALTER TABLE config ADD COLUMN peer_library TEXT;   -- the other agent's library
ALTER TABLE config ADD COLUMN link_label TEXT;     -- 'loopback', or the emulated link's name / preset and parameters

-- The peer agent's REP of a repetition: header fields and raw records (layout as `trace`).
CREATE TABLE peer_repetition (
    repetition_id      INTEGER PRIMARY KEY REFERENCES repetition(id),
    agent_id           INTEGER REFERENCES agent(id),
    role               TEXT NOT NULL,      -- spec [role] name of the peer agent
    status             TEXT NOT NULL,
    error_code         INTEGER NOT NULL,
    flags              INTEGER NOT NULL,
    bytes_c2s          INTEGER NOT NULL,
    bytes_s2c          INTEGER NOT NULL,
    packets_c2s        INTEGER NOT NULL,
    packets_s2c        INTEGER NOT NULL,
    retransmissions    INTEGER NOT NULL,
    start_ns           INTEGER NOT NULL,
    handshake_wall_ns  INTEGER NOT NULL,
    repetition_wall_ns INTEGER NOT NULL,
    records            BLOB NOT NULL
);

-- What the emulated link carried for a repetition's connection (tlsbench-link's packet log,
-- attributed by the connection's ports): packets and bytes as IP packets, so with TCP/UDP/IP
-- headers, ACKs, handshakes and retransmissions. d2p = device -> peer. Absent on loopback.
CREATE TABLE link_traffic (
    repetition_id      INTEGER PRIMARY KEY REFERENCES repetition(id),
    d2p_packets        INTEGER NOT NULL,   -- arrived at the link from the device
    d2p_bytes          INTEGER NOT NULL,
    d2p_fragments      INTEGER NOT NULL,   -- link-layer frames (= packets without a frame size)
    d2p_lost           INTEGER NOT NULL,   -- packets dropped on the link (loss, MTU, queue)
    p2d_packets        INTEGER NOT NULL,
    p2d_bytes          INTEGER NOT NULL,
    p2d_fragments      INTEGER NOT NULL,
    p2d_lost           INTEGER NOT NULL,
    first_ns           INTEGER NOT NULL,   -- first and last packet (CLOCK_MONOTONIC, the traces' clock)
    last_ns            INTEGER NOT NULL
);
