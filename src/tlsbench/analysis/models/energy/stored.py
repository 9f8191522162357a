# SPDX-License-Identifier: Apache-2.0
"""Measured energy and the store: what an import writes (one capture per experiment:
importing the same file with the same options again changes nothing; another capture
replaces the stored one only when asked, --replace) and the stored energies as tables."""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from tlsbench.schema import StoredCapture, WindowEnergies
from tlsbench.store.api import EnergyWrites, StoreReader
from tlsbench.analysis.derive.dataset import Dataset
from tlsbench.analysis.derive.measures import NO_LABEL
from tlsbench.analysis.vocab import vocab
from tlsbench.analysis.models.energy import EnergyError
from tlsbench.analysis.models.energy.measure import ImportOptions, Measurement
from tlsbench.analysis.models.energy.table import EnergyTable, Rows, group_sum

NEW, UNCHANGED, REPLACE = "new", "unchanged", "replace"
# How to go on when the store cannot be written (the end of the error message).
RETRY = "copy the experiment folder to a writable disk with room and import there"


def file_sha256(path: str | Path) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError as exc:
        raise EnergyError(f"cannot read the capture {path}: {exc.strerror}") from None


def prior(store: StoreReader, sha256: str, opts: ImportOptions, replace: bool) -> str:
    """NEW, UNCHANGED (this file with these options is already imported) or REPLACE; refuses
    to replace another capture unless asked."""
    old = store.energy_capture()
    if old is None:
        return NEW
    if old.sha256 == sha256 and old.options_json == opts.to_json():
        return UNCHANGED
    if not replace:
        what = "this capture with other options" if old.sha256 == sha256 else f"capture {old.file_name}"
        raise EnergyError(f"{store.location.folder.name} already holds {what} (imported {old.imported_at}); "
                          "pass --replace to replace it")
    return REPLACE


def save(store: EnergyWrites, m: Measurement, opts: ImportOptions) -> int:
    """Writes the capture and its energies in one transaction (replacing a stored capture);
    returns the new capture id."""
    c, f, w = m.capture, m.fit, m.windows
    capture = StoredCapture(0, c.file_name, c.format, c.sha256, opts.to_json(), m.channel, len(c.t), c.sample_period,
                            float(c.t[0]), float(c.t[-1]), m.voltage_source, m.voltage_v, m.baseline_a,
                            m.baseline_source, f.ref_ns, f.offset_s, f.rate, f.residual_rms_s, f.residual_max_s,
                            f.edges, f.edges_skipped, "")
    energies = WindowEnergies(w.rep.tolist(), [vocab().peer_name(p) for p in w.peer], w.label.tolist(),
                              w.group.tolist(), w.energy_j.tolist(), w.duration_ns.tolist(), w.occurrences.tolist())
    return store.save_capture(capture, energies)


def measured_table(ds: Dataset) -> tuple[StoredCapture, EnergyTable] | None:
    """The stored measured energies as an EnergyTable: steps, each peer's handshake (the sum
    of its steps), the HANDSHAKE and REPETITION windows. None without a capture."""
    if ds.capture is None or ds.energies is None:
        return None
    voc, e = vocab(), ds.energies
    rep = np.array(e.repetition_id, np.int64)
    peer = np.array([voc.peers.get(p, -1) for p in e.peer], np.int64)
    label = np.array(e.label, np.int64)
    value = np.array(e.energy_j, np.float64)
    out = Rows(ds.capture.label)
    step = voc.category_code[label] == voc.role_cat("step") if len(label) else np.zeros(0, bool)
    out.add("step", rep[step], peer[step], label[step], value[step])
    (r, p), total = group_sum([rep[step], peer[step]], value[step])
    out.add("handshake", r, p, NO_LABEL, total)
    for kind, role in (("handshake_window", "handshake"), ("repetition", "repetition")):
        sel = label == voc.role_label(role)
        out.add(kind, rep[sel], peer[sel], NO_LABEL, value[sel])
    return ds.capture, out.table()


def measured_groups(ds: Dataset) -> tuple[StoredCapture, dict[tuple[int, int], float]] | None:
    """The stored energy of every experiment group: (repetition id, group index) -> J. None
    without a capture."""
    if ds.capture is None or ds.energies is None:
        return None
    e, group_label = ds.energies, vocab().role_label("user_group")
    return ds.capture, {(r, g): j for r, g, lab, j in zip(e.repetition_id, e.group_index, e.label, e.energy_j)
                        if lab == group_label}
