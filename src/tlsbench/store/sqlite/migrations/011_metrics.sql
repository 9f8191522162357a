-- SPDX-License-Identifier: Apache-2.0
-- Metrics beyond time (docs/metrics.md): a handshake configuration's twin whose agent collects
-- instructions (under the tbcount valgrind tool) or memory (allocator hooks, painted stack).
-- NULL: time, as every configuration before.
ALTER TABLE config ADD COLUMN collect TEXT;
