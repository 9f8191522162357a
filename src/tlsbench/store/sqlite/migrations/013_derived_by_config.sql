-- SPDX-License-Identifier: Apache-2.0
-- Derived summaries one configuration per row (analysis/derived.py, version 2), so a report
-- reads them a configuration at a time and its memory stays flat in the number of records.
-- NULL: a batch of several configurations, as version 1 wrote them (ignored, rebuilt by
-- `tlsbench derive`).
ALTER TABLE derived_batch ADD COLUMN config_id INTEGER;
CREATE INDEX derived_by_config ON derived_batch(kind, version, config_id, first_rep);
