# SPDX-License-Identifier: Apache-2.0
"""The experiment store's tables, declared once (tables.py): the row types the run writes and
readers get, each column's meaning and keys. A store's DDL (store/sqlite/schema.py) and the
exported column docs (export/) are derived from them. Imports only core."""
from tlsbench.schema.columns import FIRST, Column, Index, Table, column, key_column, view_of
from tlsbench.schema.tables import (AGENT, BY_NAME, CONFIG, DERIVED_BATCH, DERIVED_STATS, ENERGY, ENERGY_CAPTURE,
                                    EXPERIMENT, EXPERIMENT_KEY, LINK_TRAFFIC, PEER_REPETITION, REPETITION,
                                    SCHED_AGENT, SCHED_CAPTURE, SCHED_REPETITION, SCHED_STEP, SKIPPED_CELL, TABLES,
                                    TRACE, TRACE_COUNTS, AgentRow, ConfigRow, DerivedBatch, DeviceFacts, Experiment, LinkTraffic,
                                    PeerRepetition, PeerTrace, RepetitionColumns, RepetitionRow, SchedAgent,
                                    SchedBatch, SchedCapture, SchedRepetition, SchedStep, SchedTables, SkippedCell,
                                    StoredCapture, StoredConfig, StoredRepetition, StoredStats, TraceCounts, TraceRecords,
                                    WindowEnergies, WindowEnergy)

__all__ = ["AGENT", "BY_NAME", "CONFIG", "DERIVED_BATCH", "DERIVED_STATS", "ENERGY", "ENERGY_CAPTURE", "EXPERIMENT",
           "EXPERIMENT_KEY", "FIRST", "LINK_TRAFFIC", "PEER_REPETITION", "REPETITION", "SCHED_AGENT", "SCHED_CAPTURE",
           "SCHED_REPETITION", "SCHED_STEP", "SKIPPED_CELL", "TABLES", "TRACE", "TRACE_COUNTS", "AgentRow", "Column", "ConfigRow",
           "DerivedBatch", "DeviceFacts", "Experiment", "Index", "LinkTraffic", "PeerRepetition", "PeerTrace",
           "RepetitionColumns", "RepetitionRow", "SchedAgent", "SchedBatch", "SchedCapture", "SchedRepetition",
           "SchedStep", "SchedTables", "SkippedCell", "StoredCapture", "StoredConfig", "StoredRepetition",
           "StoredStats", "Table", "TraceCounts", "TraceRecords", "WindowEnergies", "WindowEnergy", "column", "key_column", "view_of"]
