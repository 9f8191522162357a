# SPDX-License-Identifier: Apache-2.0
"""What a user names as an output is written by what it is, and never replaced unless it is a
regular file (src/tlsbench/core/files.py, docs/report.md "Where outputs go"), through the real
command line: a new name, a regular file (its owner and mode kept), a symbolic link (written
through), a dangling link, character devices made like /dev/null and /dev/full, a FIFO (its
reader gets every byte; a reader that leaves is one line), a folder, a block device, a socket,
`-`, /dev/stdout and a shell's process substitution, a missing or read-only folder, a full
disk, and a killed writer's temporary files. As root (device nodes, mounts): the nodes are
made inside the test's folder, never the system's. About 15 s."""
from __future__ import annotations

import io
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from test_damaged import fill, mounted, read_only
from tlsbench.cli import main

GOLDEN = Path(__file__).parent / "fixtures" / "golden.db"
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="device nodes and mounts need root")
TRACEBACK = "Traceback (most recent call last)"

# The commands that write a user-named file: a whole text (statistics CSV), a streamed binary
# table (the tidy Parquet writer) and the HTML report.
COMMANDS = {
    "export": lambda store, out: ["export", store, "--out", out],
    "parquet": lambda store, out: ["export", store, "--level", "repetition", "--format", "parquet", "--out", out],
    "report": lambda store, out: ["report", store, "--out", out],
}
# The report writes through the same function as the exports (and takes seconds): it is run where
# it differs (standard output holds the report, so `report: -` goes to standard error) and for the
# case the issue found (a device replaced).
CHEAP = ("export", "parquet")
# The cheap file writers and the folder options (a file each).
PLACES = {**{name: COMMANDS[name] for name in CHEAP},
          "figures": lambda store, out: ["report", store, "--out", "-", "--figures", out],
          "predict": lambda store, out: ["predict", store, "--link", "nb-iot", "--sweep", "rate", "--points", "3",
                                         "--draws", "10", "--figures", out]}
FOLDER_OPTIONS = ("figures", "predict")


def tlsbench(*args: object) -> tuple[int, bytes, str]:
    """The command line in this process: exit status, standard output, standard error."""
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert TRACEBACK not in result.stderr and "unexpected" not in result.stderr, result.stderr  # never a bug's line
    return result.exit_code, result.stdout_bytes, result.stderr


def refused(result: tuple[int, bytes, str], *advice: str) -> None:
    """Non-zero, and one `error:` line, the last, holding every piece of advice (after what was
    written before the failure: `report: -`)."""
    rc, _, err = result
    assert rc != 0 and err.count("error:") == 1 and err.splitlines()[-1].startswith("error:"), err
    for piece in advice:
        assert piece in err, f"{piece!r} not in {err}"


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("store") / "tlsbench.db"
    shutil.copy(GOLDEN, path)
    return path


@pytest.fixture(scope="module")
def expected(store, tmp_path_factory) -> dict[str, bytes]:
    """The exports' bytes written to a new regular file."""
    folder = tmp_path_factory.mktemp("expected")
    written = {}
    for name in CHEAP:
        argv = COMMANDS[name]
        rc, _, err = tlsbench(*argv(store, folder / name))
        assert rc == 0, err
        written[name] = (folder / name).read_bytes()
    return written


def complete(name: str, data: bytes, expected: dict[str, bytes]) -> bool:
    """Whether `data` is the command's whole output (a report: from its first byte to its last)."""
    if name == "parquet":
        return pq.read_table(io.BytesIO(data)).equals(pq.read_table(io.BytesIO(expected[name])))
    if name == "report":
        return data.startswith(b"<!DOCTYPE html>") and data.rstrip().endswith(b"</html>")
    return data == expected[name]


def hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


# ---------------------------------------------------------------------- regular files and links
@pytest.mark.parametrize("name", CHEAP)
def test_a_new_name_and_a_regular_file_are_written_atomically(tmp_path, store, expected, name):
    out = tmp_path / "out"
    assert tlsbench(*COMMANDS[name](store, out))[0] == 0
    assert complete(name, out.read_bytes(), expected)
    out.write_bytes(b"the previous one")
    os.chown(out, 4321, 4321)
    os.chmod(out, 0o640)
    assert tlsbench(*COMMANDS[name](store, out))[0] == 0
    st = out.stat()
    assert complete(name, out.read_bytes(), expected)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (4321, 4321, 0o640)  # the owner's file still
    assert hidden(tmp_path) == []


@pytest.mark.parametrize("name", CHEAP)
def test_a_symbolic_link_is_written_through(tmp_path, store, expected, name):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "file"
    target.write_text("the previous one")
    link = tmp_path / "link"
    link.symlink_to(target)
    assert tlsbench(*COMMANDS[name](store, link))[0] == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert complete(name, target.read_bytes(), expected)
    assert hidden(tmp_path) == [] and hidden(tmp_path / "real") == []


def test_a_dangling_link_is_refused(tmp_path, store):
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "nowhere" / "file")
    refused(tlsbench(*COMMANDS["export"](store, link)), "symbolic link", "does not exist")
    assert link.is_symlink() and not (tmp_path / "nowhere").exists()


# ---------------------------------------------------------------------- devices and FIFOs
def char_device(path: Path, major: int, minor: int) -> Path:
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
    return path


def still_device(path: Path, kind, major: int, minor: int) -> bool:
    st = path.lstat()
    return kind(st.st_mode) and (os.major(st.st_rdev), os.minor(st.st_rdev)) == (major, minor)


@pytest.mark.parametrize("name", CHEAP)
def test_a_character_device_is_written_through(tmp_path, store, name):
    null = char_device(tmp_path / "null", 1, 3)  # the kernel's /dev/null
    assert tlsbench(*COMMANDS[name](store, null))[0] == 0
    assert still_device(null, stat.S_ISCHR, 1, 3) and hidden(tmp_path) == []


@pytest.mark.parametrize("name", COMMANDS)
def test_a_full_device_is_one_line_and_stays_a_device(tmp_path, store, name):
    full = char_device(tmp_path / "full", 1, 7)  # the kernel's /dev/full: every write is ENOSPC
    refused(tlsbench(*COMMANDS[name](store, full)), str(full), "character device", "No space left on device")
    assert still_device(full, stat.S_ISCHR, 1, 7) and hidden(tmp_path) == []


class Reader(threading.Thread):
    """A FIFO's reader: everything (or the first `keep` bytes, then it leaves)."""

    def __init__(self, path: Path, keep: int | None = None):
        super().__init__(daemon=True)
        self.path, self.keep, self.data = path, keep, b""
        self.start()

    def run(self) -> None:
        with open(self.path, "rb") as fh:
            self.data = fh.read() if self.keep is None else fh.read(self.keep)

    def received(self) -> bytes:
        self.join(30)
        assert not self.is_alive()
        return self.data


@pytest.mark.parametrize("name", CHEAP)
def test_a_fifo_reader_gets_every_byte(tmp_path, store, expected, name):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = Reader(fifo)
    assert tlsbench(*COMMANDS[name](store, fifo))[0] == 0
    assert complete(name, reader.received(), expected)
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and hidden(tmp_path) == []


def test_a_fifo_whose_reader_leaves_is_one_line(tmp_path, store):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = Reader(fifo, keep=10)
    # a megabyte of slices: far more than the pipe holds once the reader is gone
    refused(tlsbench("export", store, "--level", "slice", "--format", "csv", "--out", fifo),
            "FIFO", "reader stopped reading")
    assert len(reader.received()) == 10 and stat.S_ISFIFO(fifo.lstat().st_mode)


def test_folders_block_devices_and_sockets_are_refused(tmp_path, store):
    block = tmp_path / "block"
    os.mknod(block, 0o600 | stat.S_IFBLK, os.makedev(7, 250))  # a loop device number, never opened
    refused(tlsbench(*COMMANDS["export"](store, block)), "block device")
    assert still_device(block, stat.S_ISBLK, 7, 250)
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock"))
    try:
        refused(tlsbench(*COMMANDS["parquet"](store, tmp_path / "sock")), "socket")
        assert stat.S_ISSOCK((tmp_path / "sock").lstat().st_mode)
    finally:
        sock.close()
    (tmp_path / "dir").mkdir()
    rc, _, err = tlsbench(*COMMANDS["report"](store, tmp_path / "dir"))  # click's own check: a usage error
    assert rc == 2 and "is a directory" in err
    (tmp_path / "p" / "sweep_rate.csv").mkdir(parents=True)  # a folder where a file of a folder option goes
    refused(tlsbench(*PLACES["predict"](store, tmp_path / "p")), "a folder")
    assert hidden(tmp_path) == [] and hidden(tmp_path / "p") == []


# ---------------------------------------------------------------------- standard output, descriptors
@pytest.mark.parametrize("name", COMMANDS)
def test_dash_is_standard_output(store, expected, name):
    rc, out, err = tlsbench(*COMMANDS[name](store, "-"))
    assert rc == 0 and complete(name, out, expected)
    assert ("report: -" in err) if name == "report" else err == ""


@pytest.mark.parametrize("argv", [["report", "--figures", "-"], ["report", "--pdf", "-"], ["predict", "--link", "nb-iot",
                                                                                              "--figures", "-"]])
def test_folder_options_refuse_dash(tmp_path, store, argv):
    refused(tlsbench(argv[0], store, *argv[1:]), "takes a folder")
    assert not (store.parent / "report.html").exists()


def test_dev_stdout_and_process_substitution_in_a_shell(tmp_path, store, expected):
    """`--out /dev/stdout >> FILE` appends to what FILE held (written through the descriptor,
    never renamed over), and `--out >(cmd)` feeds the command every byte."""
    log = tmp_path / "log"
    log.write_bytes(b"kept\n")
    command = f'{sys.executable} -m tlsbench.cli export "$1"'
    done = subprocess.run(["bash", "-c", f'{command} --out /dev/stdout >> "$2" && '
                                         f'{command} --out >(cat > "$3"); wait $!', "sh", store, log,
                           tmp_path / "sub"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and TRACEBACK not in done.stderr, done.stderr
    assert log.read_bytes() == b"kept\n" + expected["export"]
    assert (tmp_path / "sub").read_bytes() == expected["export"]


# ---------------------------------------------------------------------- folders that refuse, full disks
@pytest.mark.parametrize("name", CHEAP)
def test_a_missing_folder_is_one_line(tmp_path, store, name):
    refused(tlsbench(*COMMANDS[name](store, tmp_path / "nowhere" / "x")), "does not exist", "create it")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("case", [case for case in PLACES if case != "figures"])  # as predict's, and seconds
def test_a_read_only_folder_is_one_line(tmp_path, store, case):
    (tmp_path / "ro").mkdir()
    with read_only(tmp_path / "ro"):
        refused(tlsbench(*PLACES[case](store, tmp_path / "ro" / "x")), "read-only", "elsewhere")
    assert list((tmp_path / "ro").iterdir()) == []


@pytest.mark.parametrize("case", PLACES)
def test_a_full_disk_is_one_line_and_keeps_the_previous_file(tmp_path, store, case):
    disk = tmp_path / "disk"
    disk.mkdir()
    with mounted("-t", "tmpfs", "-o", "size=1m", "tmpfs", target=disk):
        previous = disk / "x" / "timeline.svg" if case in FOLDER_OPTIONS else disk / "x"
        previous.parent.mkdir(exist_ok=True)
        previous.write_text("the previous one")
        fill(disk)
        refused(tlsbench(*PLACES[case](store, disk / "x")), "disk is full", "elsewhere")
        assert previous.read_text() == "the previous one"
        assert hidden(disk) == [] and hidden(previous.parent) == []


# ---------------------------------------------------------------------- a killed writer's temporary files
def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_a_killed_writers_temporary_files_go_at_the_next_write_and_with_clean(tmp_path, store, expected):
    dead, live = dead_pid(), os.getpid()
    left = [f".x.csv.{dead}.0123abcd.partial", ".x.csv.partial", ".x.csv.89abcdef.tmp",  # this output's, dead
            f".y.csv.{dead}.0123abcd.partial"]  # another output's
    mine = f".x.csv.{live}.0123abcd.partial"  # a live writer's
    for name in left + [mine]:
        (tmp_path / name).write_text("half")
    assert tlsbench(*COMMANDS["export"](store, tmp_path / "x.csv"))[0] == 0
    assert (tmp_path / "x.csv").read_bytes() == expected["export"]
    assert hidden(tmp_path) == sorted([mine, left[3]])
    rc, out, _ = tlsbench("clean", tmp_path)
    assert rc == 0 and f"removed {tmp_path / left[3]}" in out.decode()
    assert hidden(tmp_path) == [mine]


def test_clean_leaves_a_folder_whose_store_is_being_written_alone(tmp_path):
    """Whatever its files look like: the writer lock says a live process owns the folder."""
    (tmp_path / "busy").mkdir()
    stale = tmp_path / "busy" / f".x.csv.{dead_pid()}.0123abcd.partial"
    stale.write_text("half")
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from pathlib import Path; "
                               "from tlsbench.store.locator import locate\n"
                               "with locate(Path(sys.argv[1])).lock.hold():\n"
                               " print('locked', flush=True); time.sleep(60)",
                               tmp_path / "busy"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "locked\n"
        rc, out, _ = tlsbench("clean", tmp_path)
    finally:
        holder.kill()
        holder.wait()
    assert rc == 0 and f"left {tmp_path / 'busy'} alone: its store is being written by PID {holder.pid}" in out.decode()
    assert stale.exists()
