-- SPDX-License-Identifier: Apache-2.0
-- Each configuration's statistics as a report shows them (analysis/statcache.py), computed
-- once by `tlsbench derive` (and at the end of a sweep) from the derived summaries. A row
-- holds for the inputs its digest names (the repetitions used and their rounds, the seed,
-- the versions of the derivation and the statistics): a report whose inputs differ computes
-- them anew and never writes here.
CREATE TABLE derived_stats (
    kind       TEXT NOT NULL,     -- store/api.py Kind
    config_id  INTEGER NOT NULL,
    digest     TEXT NOT NULL,     -- sha256 of the inputs (analysis/statcache.py)
    n_rows     INTEGER NOT NULL,
    rows       BLOB NOT NULL,     -- the rows of statistics, zstd-compressed JSON
    PRIMARY KEY (kind, config_id)
);
