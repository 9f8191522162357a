-- SPDX-License-Identifier: Apache-2.0
-- Experiments (the public experiment API: a library's crypto primitives and user
-- experiments, agent/include/tlsbench/experiment.h) are configurations too: one per
-- library × experiment × payload size, whose RUN names the experiment. Their repetitions
-- and traces go in the same tables as the handshakes'. NULL on handshake configurations.
ALTER TABLE config ADD COLUMN experiment TEXT;              -- HELLO experiments[].name, e.g. 'sha256'
ALTER TABLE config ADD COLUMN experiment_groups TEXT;       -- JSON array of its group names; index = USER_GROUP START value
ALTER TABLE config ADD COLUMN experiment_source TEXT;       -- 'primitive' (the library's) or 'user'
ALTER TABLE config ADD COLUMN experiment_description TEXT;  -- HELLO experiments[].description
