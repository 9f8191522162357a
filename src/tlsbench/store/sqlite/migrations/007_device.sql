-- SPDX-License-Identifier: Apache-2.0
-- Devices (plan [device], docs/porting.md): the agent's firmware on a board, counting in the
-- unit its HELLO names. NULL everywhere for host configurations and host agents.
ALTER TABLE config ADD COLUMN target TEXT;      -- the device (HELLO device.target): qemu-mps2-an386
ALTER TABLE config ADD COLUMN image TEXT;       -- the firmware image it runs on: counting, memory (footprint)
ALTER TABLE config ADD COLUMN protocol TEXT;    -- 'dtls' over the memory transport; NULL: TLS (or the network variant's)
-- One row per boot of a firmware (an agent process on the host): what it was and what it counts.
ALTER TABLE agent ADD COLUMN target TEXT;           -- HELLO device.target
ALTER TABLE agent ADD COLUMN counter_unit TEXT;     -- HELLO clock.unit: 'instructions (QEMU icount)', 'cycles (...)'
ALTER TABLE agent ADD COLUMN firmware_sha256 TEXT;  -- of the image file booted or flashed
ALTER TABLE agent ADD COLUMN firmware_json TEXT;    -- the image: variant, file, sizes; the build's library, config, toolchain
