-- SPDX-License-Identifier: Apache-2.0
-- The cycle model's class counts of each trace record of a device repetition (schema/tables.py
-- TraceCounts; plan [device] cycles, docs/cycles.md "Per-step cycles"): the QEMU plugin's
-- snapshot at each record, written with the repetition's records in one transaction, or why the
-- repetition has none. Older stores have none: their device runs use the board's reference CPI.
CREATE TABLE trace_counts (
    repetition_id INTEGER PRIMARY KEY REFERENCES repetition(id),
    board TEXT NOT NULL,
    features TEXT NOT NULL,
    counts BLOB,
    reason TEXT
);
