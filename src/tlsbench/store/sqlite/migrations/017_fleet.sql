-- SPDX-License-Identifier: Apache-2.0
-- Who measured each agent's repetitions (docs/fleet.md): the host it ran on, the fleet worker
-- that ran it (none for `tlsbench run`) and the tlsbench version and commit. NULL for agents of
-- older runs: one host, the experiment's (experiment.host_json).
ALTER TABLE agent ADD COLUMN host TEXT;
ALTER TABLE agent ADD COLUMN worker TEXT;
ALTER TABLE agent ADD COLUMN tool_version TEXT;
