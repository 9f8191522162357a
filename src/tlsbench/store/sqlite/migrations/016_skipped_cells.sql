-- SPDX-License-Identifier: Apache-2.0
-- The cells of the plan's matrix that never became a configuration, and why (plan/configs.py
-- SkippedCell: a group or credential a suite cannot take, an option that does not fit, a suite
-- its agent cannot run, a size above what an experiment takes, a metric its agent cannot
-- collect), written by the run that resolved the plan, so `status` and the report name them
-- after the run. Configurations the controller stopped running keep their config.skip_reason.
CREATE TABLE skipped_cell (
    cell    TEXT PRIMARY KEY,  -- what it would have measured: a configuration key, or its leading fields
    reason  TEXT NOT NULL
);
