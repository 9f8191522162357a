# SPDX-License-Identifier: Apache-2.0
"""Every table of an experiment store, declared once: its row type (the dataclass the run
writes and readers get), each column's meaning, and its keys.

Every row belongs to one experiment. A SQLite store keeps one experiment per file, so there
the experiment is the file; a store shared by several experiments adds EXPERIMENT_KEY to
every table's key. Raw trace records are kept as the agent sent them; the `derived_*` tables
are a cache of what analysis computes from them (rebuilt by `tlsbench derive --rebuild`).
Times are integer ns of the agent's clock unless a column says otherwise (a device counts in
its own unit: `agent.counter_unit`).

The SQLite migrations (store/sqlite/migrations/) bring an older store to these tables;
tests/test_schema.py checks that a store migrated from the first one equals a new one."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tlsbench.schema.kinds import ConfigKind, kind_of
from tlsbench.schema.columns import FIRST, Index, Table, column, key_column, view_of

if TYPE_CHECKING:
    import numpy as np

EXPERIMENT_KEY = key_column("experiment_id", "The experiment a row belongs to: the file itself in a SQLite store "
                            "(one experiment per file), part of every table's key in a store shared by experiments.")


def _id(meaning: str) -> object:
    return column(meaning, primary_key=True)


# ---------------------------------------------------------------------- the experiment
@dataclass(frozen=True)
class Experiment:
    """The `experiment` row: what was run, from which plan, where."""

    name: str = column("The experiment's name (the plan's `name`, its folder under the output folder).")
    plan_toml: str = column("The plan as the user wrote it.")
    plan_json: str = column("The fully resolved plan (defaults filled in).")
    plan_hash: str = column("sha256 of plan_json: only the same plan may resume into this store.")
    seed: int = column("The schedule's shuffle seed.")
    host_json: str = column("The machine: host name, kernel, CPU model, Python, tlsbench version.")
    created_at: str = column("When it started (ISO-8601 UTC); the store stamps it.", default="", after="name")


EXPERIMENT = Table("experiment", "The experiment: one per store.", Experiment,
                   extra=(key_column("id", "1: one experiment per SQLite file."),), singleton=True)


# ---------------------------------------------------------------------- agents and devices
@dataclass(frozen=True)
class AgentRow:
    """An `agent` row: one agent process, or one boot of a firmware on a device (the device
    and the machine a repetition ran on: its target, counter and image; `experiment.host_json`)."""

    id: int = _id("The agent's id (a restart after a death is a new row).")
    library: str = column("Its TLS library as the plan names it (mbedtls, openssl, wolfssl, name@version).")
    executable: str = column("File name of the agent binary or firmware image (no directory).")
    pid: int | None = column("Its process id (none for a board): lets operators and tests find it.")
    hello_json: str = column("Its HELLO frame verbatim (version, build, clock, tracer calibration).")
    suites_json: str = column("Its SUITES frame verbatim.")
    started_at: str = column("When it started (ISO-8601 UTC).")
    ended_at: str | None = column("When it ended; none while it runs (or when a killed host left it open).")
    exit_reason: str | None = column("'quit', or why it died (exit code or signal, stderr tail, frame problem).")
    target: str | None = column("The device a firmware boot ran on (HELLO device.target); none on the host.",
                                default=None)
    counter_unit: str | None = column("The unit a device's counter counts in (HELLO clock.unit: 'instructions "
                                      "(QEMU icount)', 'cycles (...)').", default=None)
    firmware_sha256: str | None = column("SHA-256 of the image booted or flashed.", default=None)
    firmware_json: str | None = column("The image: variant, file, sizes; the build's library, config, toolchain.",
                                       default=None)
    placement_json: str | None = column("The CPUs and priority it ran with, and why a request was refused.",
                                        default=None)
    clock_json: str | None = column("Its clock source after its RUNs and the largest drift it reported.",
                                    default=None)
    # Who measured (migration 017): a shared store holds many hosts, workers and tool versions.
    host: str | None = column("The machine the agent ran on (its controller's host name; a board: the host it "
                              "hangs off).", default=None)
    worker: str | None = column("The fleet worker that ran it (`tlsbench worker --name`); none for `tlsbench run`.",
                                default=None)
    tool_version: str | None = column("The tlsbench that ran it: version and source commit.", default=None)


AGENT = Table("agent", "One row per agent process started, or per boot of a firmware.", AgentRow)


@view_of(AGENT)
@dataclass(frozen=True)
class DeviceFacts:
    """What an `agent` row records of one boot of a firmware: the device, its counter's unit
    and the image (its SHA-256; variant, sizes, library and config as JSON)."""

    target: str
    counter_unit: str
    firmware_sha256: str
    firmware_json: str


# ---------------------------------------------------------------------- configurations
@dataclass(frozen=True)
class ConfigRow:
    """A `config` row as a plan resolves it (without id and skip_reason): one measured
    configuration; `key` identifies it across resumes."""

    key: str = column("The configuration's key: canonical text of its fields, stable across resumes and between "
                      "experiments of one plan.", unique=True)
    library: str = column("The agent's library as the plan names it (mbedtls, openssl, wolfssl, name@version).")
    suite_id: int = column("IANA cipher suite id (0 for experiments).")
    suite_name: str = column("Cipher suite name (an experiment's name for experiments).")
    key_exchange: str = column("Key exchange of the suite (ECDHE, PSK, ...).")
    authentication: str = column("Authentication of the suite (ECDSA, RSA, PSK, ...).")
    cipher: str = column("Bulk cipher of the suite.")
    mac: str = column("MAC / PRF hash of the suite.")
    min_version: str = column("Lowest protocol version offered.")
    max_version: str = column("Highest protocol version offered.")
    grp: str = column("Key-exchange group (curve or KEM; spec [group], 'default' resolved by the agent).")
    credential: str = column("Server credential (certificate key type, or PSK; spec [credential], 'auto' resolved "
                             "to the agent's pick).")
    transport: str = column("memory, tcp or udp (spec [transport]).")
    direction: str = column("Application data direction: c2s, s2c or both (spec [direction]).")
    total_bytes: int = column("Application bytes per direction (an experiment's payload size).")
    record_size: int = column("Application record size in bytes.")
    repetitions: int = column("Repetitions the plan asked for (before precision rounds).")
    options: int = column("RUN option bits (spec/protocol.toml [options]).", default=0, store_default=0)
    # Two-process configurations (docs/networks.md); none in memory.
    network_json: str | None = column("Two-process configurations: the network variant as JSON (link parameters, "
                                      "MTU, ...).", default=None)
    device_role: str | None = column("Two-process configurations: the device agent's role (client or server).",
                                     default=None)
    peer_library: str | None = column("Two-process configurations: the peer agent's library.", default=None)
    link_label: str | None = column("Two-process configurations: 'loopback', or the emulated link's name, preset "
                                    "and parameters.", default=None)
    # Experiment configurations only (none on handshakes): total_bytes is the payload size (0:
    # the experiment takes none); suite_name repeats the experiment's name.
    experiment: str | None = column("Experiment name (crypto primitive or user experiment: HELLO "
                                    "experiments[].name); none for handshakes.", default=None)
    experiment_groups: str | None = column("An experiment's group names as a JSON array (a USER_GROUP START value "
                                           "is an index into it).", default=None)
    experiment_source: str | None = column("primitive (the library's) or user; none for handshakes.", default=None)
    experiment_description: str | None = column("HELLO experiments[].description.", default=None)
    # On a device (plan/device.py); none on the host.
    target: str | None = column("The device the configuration ran on (HELLO device.target); none on the host.",
                                default=None)
    image: str | None = column("A device's firmware image: counting or memory (footprint); none on the host.",
                               default=None)
    protocol: str | None = column("'dtls' over the memory transport; none: TLS (or the network variant's).",
                                  default=None)
    # Metrics beyond time (docs/metrics.md): none = time; "instructions" or "memory" = the
    # twin of a time configuration whose repetitions carry that metric instead.
    collect: str | None = column("What the agent collects besides time (spec [collect]): none, instructions or "
                                 "memory.", default=None)

    @property
    def kind(self) -> ConfigKind:
        """What it measures and where its peers run, as its columns say (schema/kinds.py)."""
        return kind_of(vars(self))


@dataclass(frozen=True)
class StoredConfig(ConfigRow):
    """A `config` row with its id and why the controller stopped running it (if it did)."""

    id: int = column("The store's configuration id.", default=-1, primary_key=True, after=FIRST)
    skip_reason: str | None = column("Why the controller stopped running it (the agent refused it, or it was given "
                                     "up after repeated agent deaths); none while it runs.", default=None,
                                     after="options")


CONFIG = Table("config", "One measured configuration: what a RUN request carries, plus the suite's metadata.",
               StoredConfig)


@dataclass(frozen=True)
class SkippedCell:
    """A cell of the plan's matrix that never became a configuration, and why, stored with
    the experiment so `status` and the report name it after the run."""

    cell: str = column("What it would have measured: a configuration key, or its leading fields.", primary_key=True)
    reason: str = column("Why it is not measured (a group or credential a suite cannot take, an option that does "
                         "not fit, a suite its agent cannot run, a size above what an experiment takes, a metric its "
                         "agent cannot collect).")


SKIPPED_CELL = Table("skipped_cell", "The plan's matrix cells that never became a configuration.", SkippedCell)


# ---------------------------------------------------------------------- repetitions and traces
@dataclass(frozen=True)
class RepetitionRow:
    """A `repetition` row; names (status, failed_peer, role) are spec names. Stored in one
    transaction with its trace and the rest of its batch."""

    config_id: int = column("The configuration it measured.", references="config")
    idx: int = column("Its index among its configuration's repetitions.")
    round: int = column("The round (interleaved pass over every configuration) it ran in, from 0.")
    agent_id: int | None = column("The agent process that ran it (the store's agent id).", references="agent")
    status: str = column("OK, or why it failed (spec [status]: HANDSHAKE_FAILED, DISCARDED, ...).")
    failed_peer: str | None = column("The peer that failed (client or server); none when none did.")
    error_code: int = column("The library's error code of a failed repetition, 0 otherwise.", store_default=0)
    error_text: str | None = column("Why it failed, in words (both agents' reasons in a two-process run).")
    flags: int = column("Flag bits (spec [flags]: TRACE_OVERFLOW, RETRANSMITTED, WARMUP).", store_default=0)
    bytes_c2s: int | None = column("Bytes client to server over the whole repetition (the transport's counter).")
    bytes_s2c: int | None = column("Bytes server to client over the whole repetition.")
    start_ns: int | None = column("Its start on the agent's monotonic clock.")
    handshake_wall_ns: int | None = column("The handshake's stop-start wall time measured by the agent's runner, "
                                           "both peers, I/O included.")
    handshake_cpu_ns: int | None = column("The thread CPU time of the handshake phase.")
    n_events: int = column("Trace records stored.")
    dropped_events: int = column("Trace records dropped for lack of buffer space.", store_default=0)
    packets_c2s: int | None = column("Packets client to server: TCP segments (TCP_INFO), UDP datagrams or memory "
                                     "sends.", default=None)
    packets_s2c: int | None = column("Packets server to client.", default=None)
    retransmissions: int | None = column("TCP_INFO total_retrans plus DTLS flights resent (both agents').",
                                         default=None)
    role: str | None = column("The measuring agent's role (spec [role]).", default=None)
    repetition_wall_ns: int | None = column("From connection setup to close.", default=None)
    client_port: int | None = column("Two-process runs: the client's source port (names the connection).",
                                     default=None)
    server_port: int | None = column("Two-process runs: the server's port.", default=None)


REPETITION = Table("repetition", "One repetition of a configuration.", RepetitionRow,
                   extra=(key_column("id", "The store's repetition id (ascending: the order they ran in)."),
                          key_column("stored_at", "When it was stored (ISO-8601 UTC); the store stamps it.", type=str,
                                     after="dropped_events", primary_key=False)),
                   unique=(("config_id", "idx"),), indexes=(Index("repetition_by_round", ("round",)),))


@view_of(REPETITION)
@dataclass(frozen=True)
class RepetitionColumns:
    """The `repetition` rows of a read as columns ordered by id: int64 arrays with −1 where a
    value is unknown (NULL), the status names as an array of str."""

    id: np.ndarray
    config_id: np.ndarray
    idx: np.ndarray
    round: np.ndarray
    agent_id: np.ndarray
    status: np.ndarray
    flags: np.ndarray
    error_code: np.ndarray
    bytes_c2s: np.ndarray
    bytes_s2c: np.ndarray
    dropped_events: np.ndarray
    handshake_wall_ns: np.ndarray
    handshake_cpu_ns: np.ndarray
    n_events: np.ndarray

    def __len__(self) -> int:
        return len(self.id)


RECORDS_MEANING = ("Raw trace records as the agent sent them: n_events × 32 bytes in the wire layout of "
                   "docs/protocol.md (u16 label, u8 kind, u8 peer, u32 seq, u64 t_ns, u64 cpu_ns, u64 value), stored "
                   "as `encoding` says.")
ENCODING_MEANING = "How `records` is stored (store/sqlite/blobs.py): 0 as it came, 1 zstd of columns of differences."


@dataclass(frozen=True)
class TraceRecords:
    """A `trace` row: a repetition's raw records, one blob per repetition (ingests and loads
    at memory speed; analysis decodes it with numpy)."""

    repetition_id: int = column("The repetition.", primary_key=True, references="repetition")
    records: bytes = column(RECORDS_MEANING)
    encoding: int = column(ENCODING_MEANING, default=0, store_default=0)


TRACE = Table("trace", "The measuring agent's raw trace records of a repetition.", TraceRecords)


@dataclass(frozen=True)
class PeerRepetition:
    """A `peer_repetition` row: the other agent's REP of a two-process repetition (its
    header fields and raw records)."""

    agent_id: int | None = column("The peer agent process.", references="agent")
    role: str = column("The peer agent's role (spec [role]).")
    status: str = column("Its status (spec [status]).")
    error_code: int = column("Its library's error code.")
    flags: int = column("Its flag bits.")
    bytes_c2s: int = column("Bytes client to server, as the peer agent counted them.")
    bytes_s2c: int = column("Bytes server to client.")
    packets_c2s: int = column("Packets client to server.")
    packets_s2c: int = column("Packets server to client.")
    retransmissions: int = column("Its retransmissions.")
    start_ns: int = column("Its start on its monotonic clock.")
    handshake_wall_ns: int = column("Its handshake's stop-start wall time.")
    repetition_wall_ns: int = column("From connection setup to close.")
    records: bytes = column(RECORDS_MEANING)
    client_port: int | None = column("The client's port as the peer agent saw the connection.", default=None)
    server_port: int | None = column("The server's port as the peer agent saw it.", default=None)
    error_text: str | None = column("The peer agent's own failure reason.", default=None)


PEER_REPETITION = Table(
    "peer_repetition", "The peer agent's REP of a two-process repetition (docs/networks.md).", PeerRepetition,
    extra=(key_column("repetition_id", "The repetition (its measuring agent's REP).", references="repetition"),
           key_column("encoding", ENCODING_MEANING, after="error_text", primary_key=False, default=0)))


@view_of(PEER_REPETITION, rename={"rep_id": "repetition_id"})
@dataclass(frozen=True)
class PeerTrace:
    """The peer agent's trace of a two-process repetition (records decoded)."""

    rep_id: int
    agent_id: int | None
    role: str
    records: bytes


@dataclass(frozen=True)
class TraceCounts:
    """A `trace_counts` row: the cycle model's class counts of each record of a device
    repetition's trace (the QEMU plugin's snapshot at the record, run/cycles.py), or why the
    repetition has none. A step's counts are its STOP's minus its START's."""

    board: str = column("The board whose memory system (flash wait states, caches) the plugin simulated "
                        "(spec/boards.toml).")
    features: str = column("The plugin's feature names, comma-separated: the columns of counts "
                           "(agent/tools/cycles/tb_cycles.c).")
    counts: bytes | None = column("Per trace record, in the trace's record order, the plugin's counts since the "
                                  "repetition's trace began: n_events × features u64, stored as zstd of their "
                                  "differences from record to record (store/sqlite/blobs.py encode_counts); none "
                                  "when reason says why.")
    reason: str | None = column("Why the repetition has no counts (no run of the plugin's snapshots matched its "
                                "records); none when it has them.", default=None)


TRACE_COUNTS = Table("trace_counts", "The cycle model's class counts of each trace record of a device repetition "
                     "(plan [device] cycles).", TraceCounts,
                     extra=(key_column("repetition_id", "The repetition.", references="repetition"),))


@dataclass(frozen=True)
class StoredRepetition:
    """One repetition as the controller stores it with the rest of its batch: the row, its
    raw trace records, in a two-process run the peer agent's REP, and on a device with the
    cycle model attached its records' class counts (the counts blob raw: the store encodes it)."""

    row: RepetitionRow
    records: bytes
    peer: PeerRepetition | None = None
    counts: TraceCounts | None = None


@dataclass(frozen=True)
class LinkTraffic:
    """A `link_traffic` row: what the emulated link carried for one repetition's connection
    (tlsbench-link's packet log, attributed by the connection's ports): IP packets, so with
    TCP/UDP/IP headers, ACKs, handshakes and retransmissions. d2p: device to peer."""

    d2p_packets: int = column("Packets that arrived at the emulated link from the device (d2p: device to peer).")
    d2p_bytes: int = column("Bytes of those packets (IP packets: headers, ACKs and retransmissions included).")
    d2p_fragments: int = column("Link-layer frames of those packets (= packets without a frame size).")
    d2p_lost: int = column("Packets from the device the link dropped (loss, MTU, queue).")
    p2d_packets: int = column("Packets that arrived at the emulated link from the peer (p2d: peer to device).")
    p2d_bytes: int = column("Bytes of those packets.")
    p2d_fragments: int = column("Link-layer frames of those packets.")
    p2d_lost: int = column("Packets from the peer the link dropped.")
    first_ns: int = column("When the link saw the connection's first packet (CLOCK_MONOTONIC, the traces' clock).")
    last_ns: int = column("When it saw the last one.")


LINK_TRAFFIC = Table("link_traffic", "What the emulated link carried for a repetition (absent on loopback).",
                     LinkTraffic, extra=(key_column("repetition_id", "The repetition.", references="repetition"),))


# ---------------------------------------------------------------------- measured energy
@dataclass(frozen=True)
class StoredCapture:
    """The `energy_capture` row: a power analyzer's capture aligned to the trace by the
    agent's marker pulses (docs/energy.md); one per experiment."""

    id: int = _id("The capture's id.")
    file_name: str = column("The capture file's name (no directory).")
    format: str = column("ppk2, joulescope or generic.")
    sha256: str = column("Of the file's bytes.")
    options_json: str = column("The import options (the same file with the same options is the same import).")
    marker: str = column("The digital channel the pulses were read from.")
    samples: int = column("Samples in the capture.")
    sample_period_s: float = column("The median sample period [s].")
    start_s: float = column("Capture time of the first sample [s].")
    end_s: float = column("Capture time of the last sample [s].")
    voltage_source: str = column("'column' (per sample) or 'option' (constant).")
    voltage_v: float = column("The median voltage used [V].")
    baseline_a: float = column("The idle current subtracted [A].")
    baseline_source: str = column("'median outside the marked repetitions' or 'option'.")
    ref_ns: int = column("The clock fit: capture s = offset_s + rate · (trace ns − ref_ns) · 1e-9.")
    offset_s: float = column("The fit's offset [s].")
    rate: float = column("Capture seconds per trace second (1 + clock drift).")
    residual_rms_s: float = column("RMS of the marker edges around the fit [s].")
    residual_max_s: float = column("The largest residual [s].")
    edges: int = column("Marker edges fitted (2 per repetition).")
    edges_skipped: int = column("Edges of descheduled repetitions left out (displaced by a preemption).")
    imported_at: str = column("When it was imported (ISO-8601 UTC); the store stamps it.")

    @property
    def label(self) -> str:
        """How every measured energy is labelled in tables, figures and exports."""
        return f"measured (capture {self.file_name})"

    @property
    def drift_ppm(self) -> float:
        return (self.rate - 1.0) * 1e6


ENERGY_CAPTURE = Table("energy_capture", "A measured energy capture (written by `tlsbench energy import`).",
                       StoredCapture)


@dataclass(frozen=True)
class WindowEnergy:
    """An `energy` row: ∫ V·(I − baseline) dt over the windows of one repetition, peer,
    label and group."""

    capture_id: int = column("The capture.", references="energy_capture", cascade=True)
    repetition_id: int = column("The repetition.", references="repetition")
    peer: str = column("spec [peers] name; 'none' for phases of both peers.")
    label: int = column("spec label id: a step, a phase (REPETITION, HANDSHAKE, ...) or an experiment's "
                        "MEASURED_BLOCK / USER_GROUP.")
    group_index: int = column("A USER_GROUP's index in its experiment's groups; -1 otherwise.")
    energy_j: float = column("Energy above the idle baseline, summed over the windows [J].")
    duration_ns: int = column("The windows' total duration on the trace clock.")
    occurrences: int = column("Windows summed.")


ENERGY = Table("energy", "The energy of every step and phase window of a capture.", WindowEnergy,
               primary_key=("capture_id", "repetition_id", "peer", "label", "group_index"))


@view_of(ENERGY)
@dataclass(frozen=True)
class WindowEnergies:
    """The `energy` rows of a capture as columns."""

    repetition_id: list[int]
    peer: list[str]
    label: list[int]
    group_index: list[int]
    energy_j: list[float]
    duration_ns: list[float]
    occurrences: list[int]


# ---------------------------------------------------------------------- the scheduler's view
@dataclass(frozen=True)
class SchedCapture:
    """A `sched_capture` row: one `tlsbench run` of a plan that asked for the scheduler's
    view (a resume adds one)."""

    id: int = _id("The capture's id.")
    started_at: str = column("When the run started it (ISO-8601 UTC).")
    missing: str | None = column("Why tracefs gave nothing; none: traced.")
    facts_json: str = column("CPUs traced, softirqs traced, events read, events the kernel lost.")


SCHED_CAPTURE = Table("sched_capture", "A run's tracefs capture (plan metrics \"sched\").", SchedCapture)


@dataclass(frozen=True)
class SchedRepetition:
    """A `sched_repetition` row: a repetition as the scheduler saw its measuring agent
    (CLOCK_MONOTONIC ns, µs resolution). A repetition without one was not traced."""

    config_id: int = column("The configuration.", references="config")
    idx: int = column("The repetition's index.")
    wall_ns: int = column("The REPETITION span.")
    busy_ns: int = column("The agent on a CPU.")
    idle_ns: int = column("The traced CPUs idle, summed over them.")
    cpus: int = column("How many CPUs were traced (the agents').")
    voluntary: int = column("Switches away from the agent because it blocked.")
    involuntary: int = column("Switches away from the agent because it was preempted.")
    wait_ns: int = column("Runnable but not running.")
    longest_run_ns: int = column("The longest uninterrupted run inside the repetition.")
    runs: int = column("Uninterrupted runs inside it.")
    inferred: int = column("Switch-ins the trace missed, dated from the agent's records.")
    steps: int = column("Step spans.")
    steps_interrupted: int = column("Step spans with a switch or a wait (rows in sched_step).")
    softirq_agent_ns: int | None = column("Network softirqs in an agent's context (part of its busy time); none: "
                                          "not traced.")
    softirq_other_ns: int | None = column("Network softirqs in other contexts on the agents' CPUs.")


SCHED_REPETITION = Table("sched_repetition", "The scheduler's figures per repetition.", SchedRepetition,
                         extra=(key_column("capture_id", "The capture.", after="idx", references="sched_capture",
                                           primary_key=False),),
                         primary_key=("config_id", "idx"))


@dataclass(frozen=True)
class SchedStep:
    """A `sched_step` row: a step the scheduler interrupted (switched away from, or left
    runnable but waiting). A step without one ran uninterrupted, if its repetition was traced."""

    config_id: int = column("The configuration.")
    idx: int = column("The repetition's index.")
    peer: str = column("The step's peer.")
    label: str = column("The step's label.")
    occurrence: int = column("1 for the first span of that label and peer in the repetition.")
    voluntary: int = column("Switches away because the agent blocked.")
    involuntary: int = column("Switches away because it was preempted.")
    wait_ns: int = column("Runnable but not running.")
    longest_run_ns: int = column("The longest uninterrupted run inside the step.")


SCHED_STEP = Table("sched_step", "The steps the scheduler interrupted.", SchedStep,
                   primary_key=("config_id", "idx", "peer", "label", "occurrence"))


@dataclass(frozen=True)
class SchedAgent:
    """A `sched_agent` row: an agent process's totals from /proc (no root needed), cumulative
    since it started, last read after a batch."""

    agent_id: int = column("The agent process.", primary_key=True, references="agent")
    run_ns: int = column("schedstat run time, summed over its threads.")
    wait_ns: int = column("schedstat run-queue wait.")
    timeslices: int = column("schedstat timeslices.")
    voluntary: int = column("status voluntary_ctxt_switches.")
    involuntary: int = column("status nonvoluntary_ctxt_switches.")


SCHED_AGENT = Table("sched_agent", "Per agent process: scheduler totals from /proc.", SchedAgent)


@dataclass
class SchedBatch:
    """What one batch adds to the scheduler's tables (and the capture's running counts)."""

    repetitions: list[SchedRepetition] = field(default_factory=list)
    steps: list[SchedStep] = field(default_factory=list)
    agents: list[SchedAgent] = field(default_factory=list)
    events: int = 0
    lost: int = 0


@dataclass(frozen=True)
class SchedTables:
    """Every row of the scheduler's tables (none in a store that predates them)."""

    captures: list[SchedCapture]
    repetitions: list[SchedRepetition]
    steps: list[SchedStep]
    agents: list[SchedAgent]


# ---------------------------------------------------------------------- the derived cache
@dataclass(frozen=True)
class DerivedBatch:
    """A `derived_batch` row: the derived summaries of a kind's repetitions first_rep..last_rep
    of one configuration, as column blobs (analysis/derive/derived.py lays them out)."""

    version: int = column("The derivation's DERIVE_VERSION that wrote it (another's is ignored).")
    kind: str = column("The configurations it covers (store/api.py Kind).")
    first_rep: int = column("The first repetition id it covers.")
    last_rep: int = column("The last repetition id it covers (inclusive).")
    n_reps: int = column("Repetitions it covers.")
    n_measures: int = column("Measure rows it holds.")
    incomplete_records: int = column("Record calls left without a completing call.")
    reps: bytes = column("Per-repetition columns, one after the other (zstd).")
    measures: bytes = column("Measure rows (rep, peer, metric, label, value) as columns (zstd).")
    config_id: int | None = column("Its configuration; none: several (version 1 of the derivation).", default=None)


DERIVED_BATCH = Table(
    "derived_batch", "Derived per-repetition summaries: a cache of what a report needs of each trace.", DerivedBatch,
    extra=(key_column("id", "The batch's id."),),
    indexes=(Index("derived_by_kind", ("kind", "first_rep")),
             Index("derived_by_config", ("kind", "version", "config_id", "first_rep"), unique=True)))


@dataclass(frozen=True)
class StoredStats:
    """A `derived_stats` row: one configuration's statistics, for the inputs its digest names
    (analysis/derive/statcache.py lays them out)."""

    config_id: int = column("The configuration (-1: the group-by tables of all of them).")
    digest: str = column("sha256 of the inputs: the repetitions used and their rounds, exclusions, the seed, the "
                         "unit and the versions of the derivation and statistics.")
    n_rows: int = column("Rows of statistics.")
    rows: bytes = column("The rows of statistics, zstd-compressed JSON.")


DERIVED_STATS = Table("derived_stats", "Each configuration's statistics as a report with the defaults shows them.",
                      StoredStats, extra=(key_column("kind", "The configurations' kind (store/api.py Kind).", type=str,
                                                     primary_key=False),),
                      primary_key=("kind", "config_id"))


# ---------------------------------------------------------------------- every table
TABLES: tuple[Table, ...] = (EXPERIMENT, AGENT, CONFIG, REPETITION, TRACE, PEER_REPETITION, LINK_TRAFFIC,
                             ENERGY_CAPTURE, ENERGY, SCHED_CAPTURE, SCHED_REPETITION, SCHED_STEP, SCHED_AGENT,
                             DERIVED_BATCH, DERIVED_STATS, SKIPPED_CELL, TRACE_COUNTS)
BY_NAME = {t.name: t for t in TABLES}
