# SPDX-License-Identifier: Apache-2.0
"""The spec vocabulary analysis needs (labels, categories, kinds, peers, status, flags).

The one place analysis/report/export take names from the spec (via tlsbench.core.spec), so no
label or category name is written twice. Lookups are numpy arrays indexed by label id,
which keeps per-event classification vectorised.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from tlsbench.core import spec

_N_IDS = 1 << 16  # label ids are u16 on the wire


@dataclass(frozen=True)
class Vocab:
    """Names and codes from the spec, with vectorised lookups."""

    label_name: dict[int, str]            # label id -> name
    label_id: dict[str, int]              # name -> label id
    label_category: dict[int, str]        # label id -> category name
    label_meaning: dict[int, str]         # label id -> one-line meaning
    categories: tuple[str, ...]           # category names in declaration order
    category_meaning: dict[str, str]
    kinds: dict[str, int]                 # START/STOP/INSTANT -> code
    peers: dict[str, int]                 # client/server/none -> code
    status: dict[str, int]                # status name -> value
    flags: dict[str, int]                 # flag name -> bit mask
    category_code: np.ndarray = field(repr=False)  # label id -> index in categories, -1 unknown

    def cat(self, name: str) -> int:
        """Category code of a category name declared in the spec (KeyError otherwise)."""
        return self.categories.index(name)

    def role_cat(self, role: str) -> int:
        """Category code of an analysis role ("io", "step", ...; see ROLE_CATEGORIES)."""
        return self.cat(ROLE_CATEGORIES[role])

    def role_label(self, role: str) -> int:
        """Label id of an analysis role ("send", "record_read", ...; see ROLE_LABELS)."""
        return self.label_id[ROLE_LABELS[role]]

    def peer_name(self, code: int) -> str:
        return {v: k for k, v in self.peers.items()}.get(int(code), f"peer{int(code)}")

    def name(self, label: int) -> str:
        return self.label_name.get(int(label), f"label{int(label)}")

    def crypto_role_labels(self, role: str) -> np.ndarray:
        """Label ids of one CRYPTO_ROLES entry."""
        return np.array([self.label_id[n] for n in CRYPTO_ROLES[role]], dtype=np.int64)

    def labels_in(self, category: str) -> list[int]:
        """Label ids of one category, in id order."""
        return sorted(i for i, c in self.label_category.items() if c == category)


def option_names(bits: int) -> str:
    """The spec [options] names of a RUN options bit field, in declaration order."""
    return " ".join(name for name, bit in spec.load().options.by_name.items() if bits & bit)


# The categories and labels analysis gives a meaning to. Names are the spec's own; they are
# checked against the spec when it loads, so a renamed label fails loudly here, once.
ROLE_CATEGORIES = {
    "phase": "phase", "step": "step", "io": "io", "crypto": "crypto",
    "record": "record", "group": "group", "overhead": "overhead",
}
ROLE_LABELS = {
    "send": "SEND", "recv": "RECV", "record_write": "RECORD_WRITE",
    "record_read": "RECORD_READ", "handshake": "HANDSHAKE", "repetition": "REPETITION",
    "measured_block": "MEASURED_BLOCK", "user_group": "USER_GROUP",  # experiments (analysis/questions/primitives.py)
    "runqueue_wait": "RUNQUEUE_WAIT",  # descheduling (analysis/derive/load.py)
    "pace_hold": "PACE_HOLD",  # a paced agent at the part's speed (analysis/models/predict/script.py)
}
# Crypto labels by what they serve in a handshake: the key exchange (classical, KEM or both)
# and authentication by signatures. Per peer and repetition the outermost operations of each
# are summed (measures.py): a PK_VERIFY inside CHAIN_VERIFY counts once, inside it.
CRYPTO_ROLES = {
    "key_exchange": ("ECDH_MAKE_PARAMS", "ECDH_READ_PARAMS", "ECDH_MAKE_PUBLIC", "ECDH_READ_PUBLIC",
                     "ECDH_CALC_SECRET", "DHM_MAKE_PARAMS", "DHM_READ_PARAMS", "DHM_MAKE_PUBLIC",
                     "DHM_READ_PUBLIC", "DHM_CALC_SECRET", "PK_ENCRYPT", "PK_DECRYPT", "KEY_GENERATE",
                     "SHARED_SECRET", "KEM_ENCAPSULATE", "KEM_DECAPSULATE"),
    "signature": ("PK_SIGN", "PK_VERIFY", "CHAIN_VERIFY"),
}
# What the STOP value of a span means, per category (docs/protocol.md).
VALUE_MEANING = {"io": "bytes", "record": "bytes", "step": "ret", "crypto": "ret"}


@functools.cache
def vocab() -> Vocab:
    """The spec vocabulary (built once per process from tlsbench.core.spec, the host's typed
    reader of the same files), with numpy lookups added."""
    sp = spec.load()
    cats = tuple(sp.categories)
    names = {lab.name for lab in sp.labels}
    missing = [c for c in ROLE_CATEGORIES.values() if c not in cats]
    missing += [n for n in ROLE_LABELS.values() if n not in names]
    missing += [n for labels in CRYPTO_ROLES.values() for n in labels if n not in names]
    if missing:
        raise RuntimeError(f"spec/labels.toml lacks {missing}: update tlsbench.analysis.vocab")
    code = np.full(_N_IDS, -1, dtype=np.int8)
    for lab in sp.labels:
        code[lab.id] = cats.index(lab.category)
    return Vocab(
        label_name={lab.id: lab.name for lab in sp.labels},
        label_id={lab.name: lab.id for lab in sp.labels},
        label_category={lab.id: lab.category for lab in sp.labels},
        label_meaning={lab.id: lab.meaning for lab in sp.labels},
        categories=cats,
        category_meaning=dict(sp.categories),
        kinds=dict(sp.kinds.by_name),
        peers=dict(sp.peers.by_name),
        status=dict(sp.status.by_name),
        flags=dict(sp.flags.by_name),
        category_code=code,
    )
