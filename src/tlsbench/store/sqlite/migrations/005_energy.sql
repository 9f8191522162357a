-- SPDX-License-Identifier: Apache-2.0
-- Measured energy (docs/energy.md): a power analyzer's capture aligned to the trace by the
-- agent's marker pulses, and the energy of every step and phase window it gives. Written by
-- `tlsbench energy import` in one transaction; the report reads it. Estimates are not stored:
-- they are a pure function of the trace and a profile chosen at report time.

CREATE TABLE energy_capture (
    id               INTEGER PRIMARY KEY,
    file_name        TEXT NOT NULL,     -- the capture file's name (no directory)
    format           TEXT NOT NULL,     -- ppk2, joulescope, generic
    sha256           TEXT NOT NULL,     -- of the file's bytes
    options_json     TEXT NOT NULL,     -- the import options (same file + same options = same import)
    marker           TEXT NOT NULL,     -- digital channel the pulses were read from
    samples          INTEGER NOT NULL,
    sample_period_s  REAL NOT NULL,     -- median
    start_s          REAL NOT NULL,     -- capture time of the first and last sample
    end_s            REAL NOT NULL,
    voltage_source   TEXT NOT NULL,     -- 'column' (per sample) or 'option' (constant)
    voltage_v        REAL NOT NULL,     -- median voltage used
    baseline_a       REAL NOT NULL,     -- idle current subtracted
    baseline_source  TEXT NOT NULL,     -- 'median outside the marked repetitions' or 'option'
    ref_ns           INTEGER NOT NULL,  -- the fit: capture s = offset_s + rate · (trace ns − ref_ns) · 1e-9
    offset_s         REAL NOT NULL,
    rate             REAL NOT NULL,     -- capture seconds per trace second (1 + clock drift)
    residual_rms_s   REAL NOT NULL,     -- of the marker edges around the fit
    residual_max_s   REAL NOT NULL,
    edges            INTEGER NOT NULL,  -- marker edges fitted (2 per repetition)
    edges_skipped    INTEGER NOT NULL,  -- edges of descheduled repetitions left out (displaced by a preemption)
    imported_at      TEXT NOT NULL
);

-- Per repetition, peer, label and group: ∫ V·(I − baseline) dt over those windows.
CREATE TABLE energy (
    capture_id     INTEGER NOT NULL REFERENCES energy_capture(id) ON DELETE CASCADE,
    repetition_id  INTEGER NOT NULL REFERENCES repetition(id),
    peer           TEXT NOT NULL,     -- spec [peers] name; 'none' for phases of both peers
    label          INTEGER NOT NULL,  -- spec label id: a step, a phase (REPETITION, HANDSHAKE, ...) or
                                      -- an experiment's MEASURED_BLOCK / USER_GROUP
    group_index    INTEGER NOT NULL,  -- a USER_GROUP's index in its experiment's groups; -1 otherwise
    energy_j       REAL NOT NULL,     -- above the idle baseline, summed over the windows
    duration_ns    INTEGER NOT NULL,  -- Σ window durations on the trace clock
    occurrences    INTEGER NOT NULL,
    PRIMARY KEY (capture_id, repetition_id, peer, label, group_index)
);
