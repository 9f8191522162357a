-- SPDX-License-Identifier: Apache-2.0
-- A quiet controller (docs/host.md): where each agent ran and how its clock held up.
-- NULL for agents of older runs.
ALTER TABLE agent ADD COLUMN placement_json TEXT;  -- CPUs, the controller's CPUs, nice, and why a request was refused
ALTER TABLE agent ADD COLUMN clock_json TEXT;      -- its clock source after its RUNs and the largest drift it reported
