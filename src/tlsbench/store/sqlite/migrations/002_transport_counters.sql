-- SPDX-License-Identifier: Apache-2.0
-- What protocol 2's REP header adds: the transport's own counters and who measured it.
-- NULL on repetitions stored before (or without a REP: AGENT_DIED).
ALTER TABLE repetition ADD COLUMN packets_c2s INTEGER;         -- TCP segments (TCP_INFO) / UDP datagrams / memory sends
ALTER TABLE repetition ADD COLUMN packets_s2c INTEGER;
ALTER TABLE repetition ADD COLUMN retransmissions INTEGER;     -- TCP_INFO total_retrans + DTLS flights resent
ALTER TABLE repetition ADD COLUMN role TEXT;                   -- spec [role] name of the measuring agent
ALTER TABLE repetition ADD COLUMN repetition_wall_ns INTEGER;  -- connection setup start .. close end
