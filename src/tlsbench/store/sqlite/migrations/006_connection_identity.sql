-- SPDX-License-Identifier: Apache-2.0
-- Two-process runs (docs/networks.md "Identity"): the connection each agent's REP names, so
-- a stored pair can be checked to belong together, and the peer agent's failure reason.
-- NULL for in-memory repetitions and for rows stored before protocol 4.
ALTER TABLE repetition ADD COLUMN client_port INTEGER;       -- the client's source port (names the repetition)
ALTER TABLE repetition ADD COLUMN server_port INTEGER;
ALTER TABLE peer_repetition ADD COLUMN client_port INTEGER;  -- as the peer agent saw the connection
ALTER TABLE peer_repetition ADD COLUMN server_port INTEGER;
ALTER TABLE peer_repetition ADD COLUMN error_text TEXT;      -- the peer agent's own failure reason
