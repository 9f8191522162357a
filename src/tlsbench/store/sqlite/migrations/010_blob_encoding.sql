-- SPDX-License-Identifier: Apache-2.0
-- How each raw trace blob is stored (store/sqlite/blobs.py): 0 = the records as they came (every
-- row written before this migration), 1 = zstd of the records with their counters as
-- differences and their bytes grouped by position (a tenth of the size). Readers decode
-- through store/sqlite/blobs.py decode_records and never see the difference.
ALTER TABLE trace ADD COLUMN encoding INTEGER NOT NULL DEFAULT 0;
ALTER TABLE peer_repetition ADD COLUMN encoding INTEGER NOT NULL DEFAULT 0;
