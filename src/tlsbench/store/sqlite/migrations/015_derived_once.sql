-- SPDX-License-Identifier: Apache-2.0
-- One derived batch per (kind, version, configuration, first repetition): a second derivation
-- of the same repetitions replaces the first (store/sqlite/store.py add_derived_batches) instead of
-- adding to it. Two `tlsbench derive` at once, before derive took the writer lock, stored
-- every batch twice, and statistics computed from them counted every value twice. Such a
-- store's copies are dropped here (the first stored kept: both were derived from the same
-- records), and its statistics with them (`tlsbench derive` computes them again).
DELETE FROM derived_stats WHERE EXISTS
    (SELECT 1 FROM derived_batch GROUP BY kind, version, config_id, first_rep HAVING COUNT(*) > 1);
DELETE FROM derived_batch WHERE id NOT IN
    (SELECT MIN(id) FROM derived_batch GROUP BY kind, version, config_id, first_rep);
DROP INDEX derived_by_config;
CREATE UNIQUE INDEX derived_by_config ON derived_batch(kind, version, config_id, first_rep);
