# SPDX-License-Identifier: Apache-2.0
"""Every command against damaged inputs, through the real command line (a subprocess each,
as a user runs it): damaged stores (0 bytes, truncated, garbage, a page overwritten, a
foreign SQLite file, a newer schema), a read-only folder (a read-only bind mount: chmod
does not stop root), a full disk (a small tmpfs, filled), damaged plans, damaged captures,
misbehaving agents (fake agent scripts: silent, babbling, dying, hanging after greeting),
two writers on one folder and a host killed with kill -9.

Each case asserts that no traceback reaches the terminal, that the exit status is
non-zero (or zero where reading is the right answer), that the message gives the advice
that fits, and that nothing collected is lost (a damaged store's bytes are untouched, a
good store keeps its repetitions). Every command line run is counted; the module's
teardown prints inputs tried, tracebacks and hangs (`pytest -s tests/test_damaged.py`)."""
from __future__ import annotations

import contextlib
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from stores import load_path, reader
from tlsbench.run import controller, protocol
from tlsbench.store.api import StoreError
from tlsbench.store.locator import locate
from tlsbench.store.sqlite import DB_FILE, testing

TRACEBACK = "Traceback (most recent call last)"
COMMAND_TIMEOUT_S = 120
COUNTS = {"inputs": 0, "tracebacks": 0, "hangs": 0}
NAME = "dmg"
PLAN = f'''name = "{NAME}"
repetitions = 4
rounds = 2
warmup = 0
suites = ["TLS-PSK-WITH-AES-128-GCM-SHA256", "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256"]
'''
REPS = 2 * 4
IS_ROOT = os.geteuid() == 0


# ---------------------------------------------------------------------- running the CLI
@dataclass
class Outcome:
    rc: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def cli(*args: str | Path, agent_dir: Path | None = None, timeout: float = COMMAND_TIMEOUT_S,
        cwd: Path | None = None) -> Outcome:
    """One command line, as a user types it; counted, and checked for tracebacks and hangs."""
    env = dict(os.environ, COLUMNS="200")
    env.pop("TLSBENCH_TIMEOUT", None)
    if agent_dir:
        env["TLSBENCH_AGENT_DIR"] = str(agent_dir)
    COUNTS["inputs"] += 1
    proc = subprocess.Popen([sys.executable, "-m", "tlsbench.cli", *map(str, args)], env=env, cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        COUNTS["hangs"] += 1
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"`tlsbench {' '.join(map(str, args))}` hung (no end within {timeout} s)")
    result = Outcome(proc.returncode, out, err)
    if TRACEBACK in result.text:
        COUNTS["tracebacks"] += 1
        pytest.fail(f"a traceback reached the terminal:\n{result.text}")
    return result


def refused(result: Outcome, *advice: str) -> str:
    """A clean refusal: non-zero, one `error:` message on stderr holding every piece of advice."""
    assert result.rc != 0, result.text
    assert result.err.lstrip().startswith("error:"), result.text
    assert result.err.count("error:") == 1, result.text
    for piece in advice:
        assert piece in result.err, f"{piece!r} not in: {result.err}"
    return result.err


@pytest.fixture(scope="module", autouse=True)
def counts():
    yield COUNTS
    print(f"\ndamaged inputs: {COUNTS['inputs']} command lines, {COUNTS['tracebacks']} tracebacks, "
          f"{COUNTS['hangs']} hangs")
    assert COUNTS["tracebacks"] == 0 and COUNTS["hangs"] == 0


def repetitions(db: Path) -> int:
    """Repetitions stored (0 while a run is still creating the store)."""
    try:
        with reader(db) as store:
            return len(store.repetition_columns())
    except StoreError:
        return 0


def distinct_and_stored(db: Path) -> tuple[int, int]:
    """(configuration and index pairs, repetitions) stored."""
    with reader(db) as store:
        cols = store.repetition_columns()
    return len(set(zip(cols.config_id.tolist(), cols.idx.tolist()))), len(cols)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------------- a real experiment
@pytest.fixture(scope="module")
def good(tmp_path_factory, agent_path) -> Path:
    """A real experiment (two suites, 4 repetitions each) to copy and damage: its folder."""
    base = tmp_path_factory.mktemp("good")
    (base / "plan.toml").write_text(PLAN)
    result = cli("run", base / "plan.toml", "--output", base / "out", "--no-report", agent_dir=agent_path.parent)
    assert result.rc == 0, result.text
    folder = base / "out" / NAME
    assert repetitions(folder / DB_FILE) == REPS
    return folder


def copy_of(good: Path, where: Path) -> Path:
    """The good experiment under where/out/NAME, store only (no WAL files, no report)."""
    folder = where / "out" / NAME
    folder.mkdir(parents=True)
    shutil.copy(good / DB_FILE, folder / DB_FILE)
    (where / "plan.toml").write_text(PLAN)
    return folder


@pytest.fixture(scope="module")
def capture(tmp_path_factory, good) -> Path:
    """A capture of the good experiment that aligns with it (synthetic: the model of
    tests/energy_support.py), so that an import gets as far as writing its energies."""
    from energy_support import Model, synthesize, write_generic

    synthetic = synthesize(load_path(good / DB_FILE, experiments=None), Model(sample_rate_hz=2e5))
    return write_generic(synthetic, tmp_path_factory.mktemp("capture") / "capture.csv")


# ---------------------------------------------------------------------- damaged stores
def _breaks_it(db: Path) -> bool:
    """Whether the store's own check refuses it."""
    try:
        locate(db).stored_experiment()
        return False
    except StoreError:
        return True


def overwrite_a_middle_page(db: Path) -> None:
    """Random bytes over the page nearest the middle of the file whose loss SQLite can see
    (a free page, or the inside of a trace blob, would go unnoticed: no checksums)."""
    data = db.read_bytes()
    page = 4096
    pages = len(data) // page
    rng = random.Random(12)
    for n in sorted(range(1, pages), key=lambda n: abs(n - pages // 2)):
        damaged = data[:n * page] + rng.randbytes(page) + data[(n + 1) * page:]
        db.write_bytes(damaged)
        if _breaks_it(db):
            return
    raise AssertionError("no page overwrite broke the store")


def _foreign(db: Path) -> None:
    db.unlink()
    testing.foreign_database(db)


def _newer(db: Path) -> None:
    testing.set_pragma(db, "user_version", 999)
    testing.single_file(db)  # everything in the file itself


DAMAGES = {
    "truncated": lambda db: db.write_bytes(db.read_bytes()[: db.stat().st_size // 3]),
    "garbage": lambda db: db.write_bytes(random.Random(7).randbytes(db.stat().st_size)),
    "page": overwrite_a_middle_page,
    "foreign": _foreign,
}
DAMAGED_ADVICE = ("damaged or not a tlsbench store", ".recover", "left untouched")


def commands(folder: Path, where: Path, capture: Path, other: Path) -> dict[str, list]:
    """Every command that opens a store, pointed at `folder` (under where/out)."""
    out = where / "out"
    return {
        "status": ["status", NAME, "--output", out, "--all"],
        "report": ["report", folder],
        "report-out": ["report", folder, "--out", where / "r.html"],
        "export-csv": ["export", folder],
        "export-json": ["export", folder, "--format", "json", "--out", where / "e.json"],
        "export-perfetto": ["export", folder, "--format", "perfetto"],
        "compare": ["compare", other, folder],
        "trace": ["trace", "show", folder, "--rep", "1"],
        "run-resume": ["run", where / "plan.toml", "--resume", "--output", out],
        "run": ["run", where / "plan.toml", "--output", out],
        "energy-import": ["energy", "import", capture, "--experiment", folder],
        "energy-show": ["energy", "show", folder],
        "energy-estimate": ["energy", "estimate", folder, "--profile", "esp32", "--device-scale", "40"],
        "predict": ["predict", folder, "--link", "nb-iot"],
    }


COMMAND_NAMES = list(commands(Path("f"), Path("w"), Path("c"), Path("o")))


@pytest.mark.parametrize("damage", sorted(DAMAGES))
@pytest.mark.parametrize("command", COMMAND_NAMES)
def test_damaged_store_is_refused_and_left_untouched(tmp_path, good, capture, agent_path, damage, command):
    folder = copy_of(good, tmp_path)
    db = folder / DB_FILE
    DAMAGES[damage](db)
    before = digest(db)
    result = cli(*commands(folder, tmp_path, capture, good)[command], agent_dir=agent_path.parent)
    refused(result, *DAMAGED_ADVICE, str(db))
    assert digest(db) == before, "a damaged store was written to"
    assert not (folder / "report.html").exists()


@pytest.mark.parametrize("command", COMMAND_NAMES)
def test_store_of_a_newer_tlsbench_is_refused(tmp_path, good, capture, agent_path, command):
    folder = copy_of(good, tmp_path)
    _newer(folder / DB_FILE)
    before = digest(folder / DB_FILE)
    refused(cli(*commands(folder, tmp_path, capture, good)[command], agent_dir=agent_path.parent),
            "newer tlsbench", "upgrade")
    assert digest(folder / DB_FILE) == before


EMPTY_ADVICE = {"run-resume": ("nothing to resume", "run without --resume"), "run": ()}


@pytest.mark.parametrize("command", COMMAND_NAMES)
def test_empty_store_left_by_a_failed_start(tmp_path, good, capture, agent_path, command):
    """A 0-byte store holds nothing: readers say so, --resume refuses to start afresh, and
    a plain run (the user's next attempt) is not blocked by it."""
    folder = copy_of(good, tmp_path)
    (folder / DB_FILE).write_bytes(b"")
    result = cli(*commands(folder, tmp_path, capture, good)[command], agent_dir=agent_path.parent)
    if command == "run":
        assert result.rc == 0, result.text
        assert repetitions(folder / DB_FILE) == REPS
        return
    refused(result, *EMPTY_ADVICE.get(command, ("holds no experiment yet",)))
    assert (folder / DB_FILE).stat().st_size == 0


# ---------------------------------------------------------------------- read-only folder, full disk
@contextlib.contextmanager
def mounted(*args: str, target: Path) -> Iterator[Path]:
    if not IS_ROOT:
        pytest.skip("needs root (mount)")
    done = subprocess.run(["mount", *args, str(target)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount here: {done.stderr.strip()}")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], check=True)


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[Path]:
    """A read-only bind mount of the folder onto itself (root ignores file modes)."""
    with mounted("--bind", str(folder), target=folder):
        subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)], check=True)
        yield folder


# Readers keep working on a read-only folder; writers say so and where else to write.
READ_ONLY_EXPECTED = {
    "status": None, "report-out": None, "export-csv": None, "export-perfetto": None, "compare": None,
    "trace": None, "energy-estimate": None, "predict": None,
    "report": ("read-only", "--out"),
    "export-json": ("read-only", "--out"),
    "run-resume": ("read-only", "--output"),
    "run": ("read-only", "--output"),
    "energy-import": ("read-only", "copy the experiment folder"),
    "energy-show": ("holds no capture",),
}


@pytest.mark.parametrize("command", COMMAND_NAMES)
def test_read_only_folder(tmp_path, good, capture, agent_path, command):
    folder = copy_of(good, tmp_path / "ro")
    (tmp_path / "w").mkdir()
    argv = commands(folder, tmp_path / "ro", capture, good)[command]
    argv = [tmp_path / "w" / a.name if isinstance(a, Path) and a.suffix in (".html", ".json") else a for a in argv]
    if command == "export-json":
        argv[-1] = tmp_path / "ro" / "e.json"  # into the read-only folder
    with read_only(tmp_path / "ro"):
        result = cli(*argv, agent_dir=agent_path.parent)
        expected = READ_ONLY_EXPECTED[command]
        if expected is None:
            assert result.rc == 0, result.text
        else:
            refused(result, *expected)
    assert repetitions(folder / DB_FILE) == REPS
    assert not (folder / "report.html").exists() and not list(folder.glob(".*.tmp"))


def fill(folder: Path) -> None:
    """Fills the file system of `folder` up to the last byte (unbuffered: nothing is left to
    flush, and fail, on close)."""
    with open(folder / "filler", "wb", buffering=0) as fh:
        with contextlib.suppress(OSError):
            while True:
                fh.write(b"\0" * 65536)
    with contextlib.suppress(OSError), open(folder / "filler2", "wb", buffering=0) as fh:
        for _ in range(65536):
            fh.write(b"\0")


FULL_EXPECTED = {
    "status": None, "export-csv": None, "export-perfetto": None, "compare": None, "trace": None,
    "energy-estimate": None, "predict": None,
    "report": ("disk is full", "--out", "no partial file"),
    "report-out": ("disk is full", "--out"),
    "export-json": ("disk is full", "--out"),
    "run-resume": ("disk is full", "run the same command again", "--output"),
    "run": ("disk is full", "run the same command again", "--output"),
    "energy-import": ("disk is full", "copy the experiment folder"),
    "energy-show": ("holds no capture",),
}


@pytest.mark.parametrize("command", COMMAND_NAMES)
def test_full_disk(tmp_path, good, capture, agent_path, command):
    (tmp_path / "disk").mkdir()
    with mounted("-t", "tmpfs", "-o", "size=2m", "tmpfs", target=tmp_path / "disk"):
        folder = copy_of(good, tmp_path / "disk")
        (folder / "report.html").write_text("the previous report")
        argv = commands(folder, tmp_path / "disk", capture, good)[command]
        fill(tmp_path / "disk")
        result = cli(*argv, agent_dir=agent_path.parent)
        expected = FULL_EXPECTED[command]
        if expected is None:
            assert result.rc == 0, result.text
        else:
            refused(result, *expected)
        (tmp_path / "disk" / "filler").unlink()
        assert repetitions(folder / DB_FILE) == REPS
        assert (folder / "report.html").read_text() == "the previous report"  # never truncated
        assert not list(folder.glob(".*.tmp")) and not list((tmp_path / "disk").glob(".*.tmp"))


def test_disk_full_during_a_run_then_resume(tmp_path, agent_path):
    """The disk fills up mid-sweep: one line saying so, every stored repetition stays; with
    room again, the same command completes the sweep, each repetition stored once."""
    (tmp_path / "disk").mkdir()
    plan = tmp_path / "long.toml"
    plan.write_text(PLAN.replace("repetitions = 4", "repetitions = 600").replace("rounds = 2", "rounds = 4"))
    # A batch (150 repetitions, ~180 KB of compressed traces) is stored in one transaction:
    # the disk holds a few batches, not the sweep (1200 repetitions, ~1.5 MB).
    with mounted("-t", "tmpfs", "-o", "size=1m", "tmpfs", target=tmp_path / "disk"):
        db = tmp_path / "disk" / NAME / DB_FILE
        refused(cli("run", plan, "--output", tmp_path / "disk", "--no-report", agent_dir=agent_path.parent),
                "disk is full", "safe")
        before = repetitions(db)
        assert 0 < before < 1200
        subprocess.run(["mount", "-o", "remount,size=16m", str(tmp_path / "disk")], check=True)
        result = cli("run", plan, "--output", tmp_path / "disk", "--no-report", agent_dir=agent_path.parent)
        assert result.rc == 0, result.text
        assert distinct_and_stored(db) == (1200, 1200)
        with reader(db) as store:
            reasons = [a.exit_reason for a in store.agent_rows()]
        # The first agent's row is ended by its own run (the small update fits where the batch
        # did not) or, when even that failed, by the second run as left open.
        assert None not in reasons and (reasons[0] == controller.STALE_AGENT_REASON or reasons[0].startswith("quit"))


# ---------------------------------------------------------------------- damaged plans
PLANS = {  # file bytes -> what the message must say
    "binary": (b"\xa3\x00\xff name", ("not UTF-8",)),
    "not toml": (b'name = "x\nrepetitions = 2\n', ("not valid TOML",)),
    "empty": (b"", ("name: required field is missing",)),
    "unknown field": (b'name = "x"\nrepetitions = 2\nrepetition = 3\n', ("unknown field",)),
    "wrong type": (b'name = "x"\nrepetitions = "4"\n', ("repetitions",)),
    "negative": (b'name = "x"\nrepetitions = -4\n', ("repetitions: -4 is not valid",)),
    "rate pattern": (b'name = "x"\nrepetitions = 2\n[network]\n[[network.links]]\nrate = "fast"\n',
                     ("[kMG]",)),  # square brackets survive: no markup
    "transport and network": (b'name = "x"\nrepetitions = 2\ntransport = "tcp"\n[network]\n',
                              ("described by a [network] section",)),
    "dtls timers": (b'name = "x"\nrepetitions = 2\n[network]\ntransports = "udp"\n'
                    b'dtls = { timeout_min_ms = 4000, timeout_max_ms = 1000 }\n', ("timeout_min_ms (4000) is above",)),
    "device twice": (b'name = "x"\n[device]\ntarget = "qemu-mps2-an386"\nserial = "/dev/ttyACM0"\n',
                     ("device: give exactly one of target",)),
    "device and network": (b'name = "x"\n[network]\n[device]\ntarget = "qemu-mps2-an386"\n',
                           ("network cannot be combined with device",)),
    "unknown device": (b'name = "x"\n[device]\ntarget = "qemu-nrf52"\n', ("device.target", "qemu-mps2-an386")),
    "flash without image": (b'name = "x"\n[device]\nplace = "rack1"\nfirmware = "a.elf"\nflash = "flash-it"\n',
                            ("write {image} where the command takes the image's path",)),
    "flash of an emulated board": (b'name = "x"\n[device]\ntarget = "qemu-mps2-an386"\nflash = "cp {image} x"\n',
                                   ("flash: only with serial or place",)),
    "labgrid flash without a place": (b'name = "x"\n[device]\nserial = "/dev/ttyACM0"\nfirmware = "a.elf"\n'
                                      b'flash = "labgrid"\n', ('flash = "labgrid" flashes through a labgrid place',)),
}
# Mistakes only the agents or the link emulator can see: found before anything is written.
RESOLVED_PLANS = {
    "suite typo": (PLAN.replace("TLS-PSK-WITH-AES-128-GCM-SHA256", "TLS-PSK-WITH-AES-128-GCM-SHA265").encode(),
                   ("matches no suite", "close matches")),
    "unknown experiment": (b'name = "dmg"\nrepetitions = 2\nexperiments = ["sha257"]\n', ("matches no experiment",)),
    "unknown preset": (b'name = "dmg"\nrepetitions = 2\n[network]\n[[network.links]]\npreset = "zigbee"\n',
                       ("network.links[0]", "unknown preset", "zigbee", "tlsbench-link presets")),
    "link out of range": (b'name = "dmg"\nrepetitions = 2\n[network]\n[[network.links]]\npreset = "lte-m"\n'
                          b'd2p = { loss = 100, reorder = 100, reorder_delay = 1e300 }\n', ("out of range",)),
    "missing peer": (b'name = "dmg"\nrepetitions = 2\n[network]\npeer_library = "nosuch"\n', ("no agent",)),
    "missing firmware": (b'name = "dmg"\n[device]\ntarget = "qemu-mps2-an386"\nfirmware = "nosuch.elf"\n',
                         ("device firmware nosuch.elf not found", "tlsbench build firmware")),
    "missing serial port": (b'name = "dmg"\n[device]\nserial = "/dev/nosuch-tty"\nfirmware = "/etc/hostname"\n',
                            ("cannot open the serial port /dev/nosuch-tty",)),
    "failing flash": (b'name = "dmg"\n[device]\nserial = "/dev/nosuch-tty"\nfirmware = "/etc/hostname"\n'
                      b'flash = "false {image}"\n', ("the flash command `false /etc/hostname` failed (exit status 1)",)),
}


@pytest.mark.parametrize("case", sorted(PLANS))
@pytest.mark.parametrize("command", ["run", "plan-show"])
def test_damaged_plan(tmp_path, agent_path, case, command):
    data, advice = PLANS[case]
    (tmp_path / "p.toml").write_bytes(data)
    argv = ["plan", "show", tmp_path / "p.toml"] if command == "plan-show" else \
        ["run", tmp_path / "p.toml", "--output", tmp_path / "out"]
    refused(cli(*argv, agent_dir=agent_path.parent), *advice)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("case", sorted(RESOLVED_PLANS))
def test_plan_mistakes_found_before_anything_is_written(tmp_path, agent_path, case):
    data, advice = RESOLVED_PLANS[case]
    (tmp_path / "p.toml").write_bytes(data)
    refused(cli("run", tmp_path / "p.toml", "--output", tmp_path / "out", agent_dir=agent_path.parent), *advice)
    assert not (tmp_path / "out").exists()


def test_fixed_typo_is_not_blocked_by_the_failed_attempt(tmp_path, agent_path):
    bad, _ = RESOLVED_PLANS["suite typo"]
    (tmp_path / "p.toml").write_bytes(bad)
    refused(cli("run", tmp_path / "p.toml", "--output", tmp_path / "out", agent_dir=agent_path.parent))
    (tmp_path / "p.toml").write_text(PLAN)
    result = cli("run", tmp_path / "p.toml", "--output", tmp_path / "out", "--no-report", agent_dir=agent_path.parent)
    assert result.rc == 0, result.text
    assert repetitions(tmp_path / "out" / NAME / DB_FILE) == REPS


@pytest.mark.parametrize("argv, advice", [
    (["run", "nosuch.toml"], ("cannot read it",)),
    (["run", "."], ("is a directory",)),
    (["run", "--resume", "--output", "nowhere"], ("nothing to resume",)),
    (["run", "--timeout", "greeting=-1"], ("greeting=-1",)),
    (["suites", "--timeout", "patience=5"], ("unknown wait",)),
    (["suites", "--device", "nowhere"], ("neither an emulated board",)),
    (["suites", "--device", "/dev/nosuch-tty"], ("needs --firmware",)),
])
def test_bad_arguments(tmp_path, agent_path, argv, advice):
    result = cli(*argv, agent_dir=agent_path.parent, cwd=tmp_path)
    assert result.rc != 0 and all(a in result.err for a in advice), result.text


# ---------------------------------------------------------------------- damaged captures
CAPTURES = {  # file bytes, extra options -> what the message must say
    "nan current": (b"time_s,current_mA,voltage_V,marker\n0,1,3.3,0\n0.001,nan,3.3,1\n0.002,1,3.3,0\n", (),
                    ("sample 2 (line 3) has current nan",)),
    "inf voltage": (b"time_s,current_mA,voltage_V,marker\n0,1,3.3,0\n0.001,1,inf,1\n0.002,1,3.3,0\n", (),
                    ("has voltage inf",)),
    "voltage without unit": (b"time_s,current_mA,voltage,marker\n0,1,3.3,0\n0.001,1,3.3,1\n", (),
                             ("column 'voltage' has no unit", "--voltage-unit V")),
    "current without unit": (b"time_s,current,marker\n0,1,0\n0.001,1,1\n", (), ("--current-unit",)),
    "binary": (bytes(range(256)) * 8, (), ("holds NUL bytes", "export the capture as CSV text")),
    "empty": (b"", (), ("no time and no current column",)),
    "header only": (b"Timestamp(ms),Current(uA),D0-D7\n", (), ("no samples",)),
    "ragged ppk2": (b"Timestamp(ms),Current(uA),D0-D7\n0,1,00000000\n1,2\n", (), ("not a valid capture",)),
    "bad digital": (b"Timestamp(ms),Current(uA),D0-D7\n0,1,Q0000000\n1,2,00000000\n", (), ("'Q' is not valid",)),
    "time backwards": (b"time_s,current_mA,marker\n0,1,0\n0.002,1,1\n0.001,1,0\n", (), ("does not increase",)),
    "no current": (b"time_s,volts,marker\n0,1,0\n", (), ("no current column",)),
    "no pulses": (b"time_s,current_mA,voltage_V,marker\n" + b"".join(b"%g,1,3.3,0\n" % (i * 1e-3) for i in range(50)),
                  (), ("marker",)),
    "nan option": (b"time_s,current_mA,marker\n0,1,0\n", ("--voltage", "nan"), ("not a positive finite number",)),
}


@pytest.mark.parametrize("case", sorted(CAPTURES))
def test_damaged_capture_is_refused_and_stores_nothing(tmp_path, good, agent_path, case):
    folder = copy_of(good, tmp_path)
    data, options, advice = CAPTURES[case]
    (tmp_path / "c.csv").write_bytes(data)
    before = digest(folder / DB_FILE)
    result = cli("energy", "import", tmp_path / "c.csv", "--experiment", folder, *options)
    assert result.rc != 0 and all(a in result.err for a in advice), result.text
    assert digest(folder / DB_FILE) == before


# ---------------------------------------------------------------------- misbehaving agents
def greeting(agent_path: Path) -> bytes:
    """The real agent's HELLO and SUITES frames, to replay."""
    out = subprocess.run([str(agent_path), "serve"], stdin=subprocess.DEVNULL, capture_output=True, timeout=30).stdout
    frames = protocol.decode_frames(out)
    assert [f.type_name for f in frames] == ["HELLO", "SUITES"]
    return out


FAKES = {  # library name -> what the fake agent does after it starts (Python, stdin/stdout binary)
    "silent": "time.sleep(3600)",
    "babbling": "out.write(random.Random(1).randbytes(4096)); out.flush(); time.sleep(3600)",
    "dying": "sys.stderr.write('cannot open the crypto device [dev0]\\n'); sys.exit(3)",
    "hanging": "out.write(GREETING); out.flush(); time.sleep(3600)",
    "corrupt": "out.write(GREETING); out.flush(); sys.stdin.buffer.read(8); out.write(b'\\x00' * 64); out.flush(); "
               "time.sleep(3600)",
    "other-spec": "out.write(OTHER_SPEC); out.flush(); time.sleep(3600)",
    "malformed": "out.write(MALFORMED); out.flush(); time.sleep(3600)",
    "incomplete": "out.write(INCOMPLETE); out.flush(); time.sleep(3600)",
}


@pytest.fixture(scope="module")
def fake_agents(tmp_path_factory, agent_path) -> Path:
    """A folder of fake agents `tlsbench-agent-<behaviour>` (and the link emulator)."""
    folder = tmp_path_factory.mktemp("fake-agents")
    real = greeting(agent_path)
    hello, suites = protocol.decode_frames(real)
    other = protocol.encode_json(hello.type, {**hello.json(), "labels_crc32": 1}) + real[suites.offset:]
    malformed = real[:suites.offset] + protocol.encode_json(suites.type, {"suites": 7})
    incomplete = real[:suites.offset] + protocol.encode_json(suites.type, {"suites": [{"id": 49195}]})
    (folder / "greeting.bin").write_bytes(real)
    (folder / "other.bin").write_bytes(other)
    (folder / "malformed.bin").write_bytes(malformed)
    (folder / "incomplete.bin").write_bytes(incomplete)
    for name, behaviour in FAKES.items():
        script = folder / f"tlsbench-agent-{name}"
        script.write_text(f"#!{sys.executable}\nimport random, sys, time\nfrom pathlib import Path\n"
                          f"HERE = Path({str(folder)!r})\nGREETING = (HERE / 'greeting.bin').read_bytes()\n"
                          "OTHER_SPEC = (HERE / 'other.bin').read_bytes()\n"
                          "MALFORMED = (HERE / 'malformed.bin').read_bytes()\n"
                          "INCOMPLETE = (HERE / 'incomplete.bin').read_bytes()\nout = sys.stdout.buffer\n"
                          f"{behaviour}\n")
        script.chmod(0o755)
    link = agent_path.parent / "tlsbench-link"
    if link.exists():
        (folder / "tlsbench-link").symlink_to(link)
    return folder


def fake_plan(tmp_path: Path, library: str, extra: str = "") -> Path:
    path = tmp_path / "fake.toml"
    path.write_text(f'name = "fake"\nlibrary = "{library}"\nrepetitions = 3\nrounds = 1\nwarmup = 0\n'
                    f'suites = ["TLS-PSK-WITH-AES-128-GCM-SHA256"]\n{extra}')
    return path


STARTUP = {  # fake -> advice (the agent fails before any plan resolution: nothing written)
    "silent": ("did not greet (HELLO, SUITES) within 1 s", "--timeout greeting="),
    "babbling": ("not a HELLO frame", "Rebuild it with make"),
    "dying": ("exited before its greeting", "exit code 3", "[dev0]"),
    "other-spec": ("built from other specs", "rebuild it with make"),
    "malformed": ("malformed greeting", "SUITES suites is not a list"),
    "incomplete": ("malformed greeting", "SUITES suites[0] lacks name, key_exchange"),
}


@pytest.mark.parametrize("fake", sorted(STARTUP))
@pytest.mark.parametrize("command", ["run", "suites", "experiments"])
def test_agent_that_fails_its_greeting(tmp_path, fake_agents, fake, command):
    argv = {"run": ["run", fake_plan(tmp_path, fake), "--output", tmp_path / "out"],
            "suites": ["suites", "--library", fake], "experiments": ["experiments", "--library", fake]}[command]
    started = time.monotonic()
    refused(cli(*argv, "--timeout", "greeting=1", agent_dir=fake_agents, timeout=60), *STARTUP[fake])
    assert time.monotonic() - started < 30
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("fake, why, extra", [
    ("hanging", "killed as hung", ""),
    ("corrupt", "corrupt frame", ""),
    ("hanging", "no frame from either agent for 1 s", '[network]\ntransports = ["tcp"]\n'),  # READY
])
def test_agent_that_breaks_during_batches(tmp_path, fake_agents, fake, why, extra):
    """Deaths are stored per repetition; after 3 in a row the configuration is given up and
    the run ends with status 1, saying why."""
    plan = fake_plan(tmp_path, fake, extra)
    result = cli("run", plan, "--output", tmp_path / "out", "--timeout", "silence=1", "--timeout", "ready=1",
                 "--no-report", agent_dir=fake_agents, timeout=90)
    refused(result, "given up because the agent kept dying", "tlsbench status")
    assert why in result.out
    with reader(tmp_path / "out" / "fake" / DB_FILE) as store:
        rows = [r for _, r in store.repetition_rows()]
        assert [r.status for r in rows] == ["AGENT_DIED"] * controller.MAX_CONSECUTIVE_DEATHS
        assert all(r.error_text and why in r.error_text for r in rows)
        assert all(a.ended_at is not None for a in store.agent_rows())


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def _wait_gone(pids: list[int], seconds: float = 10) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


def test_silent_agent_ends_with_a_killed_host(tmp_path, fake_agents):
    """kill -9 of the host while it waits for a greeting: the agent goes too (it was in its
    own process group, so only the kernel's parent-death signal can reach it)."""
    env = dict(os.environ, TLSBENCH_AGENT_DIR=str(fake_agents))
    COUNTS["inputs"] += 1
    host = subprocess.Popen([sys.executable, "-m", "tlsbench.cli", "suites", "--library", "silent"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not (agents := _children(host.pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert agents, "the host started no agent"
    host.kill()
    host.wait()
    assert _wait_gone(agents) == [], "the agent outlived the host"


def test_two_runs_on_one_folder_and_a_killed_host(tmp_path, agent_path):
    """A second writer is refused at once with the first one's PID while readers keep
    working; kill -9 of the first leaves no agent behind and agent rows that the next run
    closes; every repetition ends up stored exactly once."""
    # DHE-RSA: about 18 ms a handshake here, so the sweep lasts 35 s and more: longer than the
    # checks below take on a loaded machine.
    reps = 2000
    plan = tmp_path / "long.toml"
    plan.write_text(PLAN.replace("repetitions = 4", f"repetitions = {reps}").replace("rounds = 2", "rounds = 4")
                    .replace("TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", "TLS-DHE-RSA-WITH-AES-128-GCM-SHA256"))
    db = tmp_path / "out" / NAME / DB_FILE
    env = dict(os.environ, TLSBENCH_AGENT_DIR=str(agent_path.parent))
    COUNTS["inputs"] += 1
    first = subprocess.Popen([sys.executable, "-m", "tlsbench.cli", "run", str(plan), "--output", str(tmp_path / "out"),
                              "--no-report"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while (not db.exists() or repetitions(db) < 10) and time.monotonic() < deadline:
            assert first.poll() is None, first.stderr.read()
            time.sleep(0.05)
        started = time.monotonic()
        second = cli("run", plan, "--output", tmp_path / "out", agent_dir=agent_path.parent)
        refused(second, "being written by another tlsbench", f"PID {first.pid}", "--output")
        assert time.monotonic() - started < 20  # refused before any agent ran (a full sweep takes longer)
        refused(cli("energy", "import", plan, "--experiment", tmp_path / "out" / NAME), f"PID {first.pid}")
        assert repetitions(db) < 2 * reps, "the sweep ended before the checks: make it longer"
        assert cli("status", NAME, "--output", tmp_path / "out").rc == 0  # readers keep working
        assert first.poll() is None, "the first run did not survive the second"
        agents = _children(first.pid)
    finally:
        first.kill()
        first.wait()
    assert agents and _wait_gone(agents) == [], "an agent outlived the killed host"
    with reader(db) as store:
        assert sum(a.ended_at is None for a in store.agent_rows()) >= 1
    result = cli("run", plan, "--output", tmp_path / "out", "--resume", "--no-report", agent_dir=agent_path.parent)
    assert result.rc == 0, result.text
    assert distinct_and_stored(db) == (2 * reps, 2 * reps)
    with reader(db) as store:
        agents = store.agent_rows()
    open_rows = sum(a.ended_at is None for a in agents)
    stale = sum(a.exit_reason == controller.STALE_AGENT_REASON for a in agents)
    assert open_rows == 0 and stale >= 1


# ---------------------------------------------------------------------- the boundary itself
def test_unexpected_error_is_one_line_and_a_traceback_file(tmp_path, good, monkeypatch):
    """A failure no check foresaw (simulated: status raising a bare RuntimeError) is one
    line naming a file that holds the traceback; square brackets survive."""
    from click.testing import CliRunner

    from tlsbench import cli as cli_module
    from tlsbench.store import progress as status

    def boom(store, folder):
        raise RuntimeError("boom [x] [red]not markup[/]")

    monkeypatch.setattr(status, "status_of", boom)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    COUNTS["inputs"] += 1
    result = CliRunner().invoke(cli_module.main, ["status", str(good)], catch_exceptions=False)
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and TRACEBACK not in result.output
    assert "unexpected RuntimeError: boom [x] [red]not markup[/]" in lines[0]
    saved = list(tmp_path.glob(f"{cli_module.TRACEBACK_PREFIX}*.txt"))
    assert len(saved) == 1 and str(saved[0]) in lines[0]
    assert TRACEBACK in saved[0].read_text() and "boom" in saved[0].read_text()
