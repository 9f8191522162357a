-- SPDX-License-Identifier: Apache-2.0
-- Derived per-repetition summaries (analysis/derived.py): what a report needs of each
-- repetition's trace (its measures and a few facts), computed once from the raw records so
-- a report reads columns instead of decoding every record. The raw records stay the source
-- of truth: `tlsbench derive --rebuild` recomputes all of it, and a batch written by another
-- version of the derivation is ignored (and rebuilt by `tlsbench derive`).
CREATE TABLE derived_batch (
    id                  INTEGER PRIMARY KEY,
    version             INTEGER NOT NULL,  -- analysis/derived.py DERIVE_VERSION that wrote it
    kind                TEXT NOT NULL,     -- the configurations it covers: store/api.py Kind
    first_rep           INTEGER NOT NULL,  -- the repetition ids it covers, inclusive
    last_rep            INTEGER NOT NULL,
    n_reps              INTEGER NOT NULL,
    n_measures          INTEGER NOT NULL,
    incomplete_records  INTEGER NOT NULL,  -- record calls left without a completing call
    reps                BLOB NOT NULL,     -- per-repetition columns, one after the other
    measures            BLOB NOT NULL      -- measure rows (rep, peer, metric, label, value), columns
);
CREATE INDEX derived_by_kind ON derived_batch(kind, first_rep);
