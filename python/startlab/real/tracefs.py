"""tcp_probe and tcp_retransmit_skb from a private tracefs instance (``instances/startlab-<pid>-<n>``,
``trace_clock`` = ``mono``), filtered on one connection and read from ``trace_pipe`` by a thread:
the kernel's own per-ACK state for kernel TCP runs (:mod:`startlab.real.kerneltcp`) and the kernel
clock of the BPF conformance runs (:mod:`startlab.real.conformance`).

tracefs is used where it is mounted; if it is not mounted anywhere, it is mounted on a private
directory (``/run/startlab/tracefs-<pid>-<n>``) and unmounted afterwards — never on
``/sys/kernel/tracing``, where "mount if absent, unmount when done" would race with any other
process doing the same. :func:`recover` removes the instances and private mounts of processes
that died.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from .testbed import TestbedError
from .system import STATE_DIR, alive, write

_INSTANCE = re.compile(r"^startlab-(\d+)-(\d+)$")
_PRIVATE_MOUNT = re.compile(r"^tracefs-(\d+)-(\d+)$")
_RUNS = itertools.count()
_MOUNTS = itertools.count()


class TracefsError(TestbedError):
    """tracefs or its tcp tracepoints cannot be used here; the message says why."""


# --- tracefs -----------------------------------------------------------------------------------


def _tracefs_mounts() -> list[Path]:
    """Mount points of tracefs in this mount namespace (/sys/kernel/tracing first)."""
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mounts").read_text().splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[2] == "tracefs" and "\\" not in parts[1]:
                found.append(Path(parts[1]))
    return sorted(found, key=lambda p: p != Path("/sys/kernel/tracing"))


def _private_mount_point() -> Path:
    # One per use, never shared: another user of the same mount point could keep it busy (an open
    # trace_pipe) when its owner unmounts it, or find it gone.
    return STATE_DIR / f"tracefs-{os.getpid()}-{next(_MOUNTS)}"


def _is_private(point: Path) -> bool:
    return point.parent == STATE_DIR and _PRIVATE_MOUNT.match(point.name) is not None


class _Tracefs:
    """The tracefs mount this process uses: an existing one, or a private mount it made (and
    unmounts in :meth:`release`)."""

    def __init__(self) -> None:
        self.root: Path | None = None
        self.mounted: Path | None = None

    def acquire(self) -> Path:
        existing = [m for m in _tracefs_mounts() if not _is_private(m)]
        if existing:
            self.root = existing[0]
            return self.root
        if shutil.which("mount") is None:
            raise TracefsError("tracefs is not mounted and there is no `mount` command to mount it")
        point = _private_mount_point()
        point.mkdir(parents=True, exist_ok=True)
        self.mounted = point  # before the mount: a signal handler that runs right after it unmounts it
        done = subprocess.run(["mount", "-t", "tracefs", "nodev", str(point)], capture_output=True, text=True)
        if done.returncode != 0:
            self.mounted = None
            with contextlib.suppress(OSError):
                point.rmdir()
            raise TracefsError(f"tracefs is not mounted and mounting it failed: {done.stderr.strip()}")
        self.root = point
        return point

    def release(self) -> bool:
        """Unmount a private mount (a failed unmount is kept for the next call); True when done."""
        if self.mounted is not None:
            if not _unmount(self.mounted):
                return False
            self.mounted = None
        self.root = None
        return True


def _unmount(point: Path, tries: int = 50) -> bool:
    for _ in range(tries):
        if point not in _tracefs_mounts():
            with contextlib.suppress(OSError):
                point.rmdir()
            return True
        if subprocess.run(["umount", str(point)], capture_output=True).returncode == 0:
            with contextlib.suppress(OSError):
                point.rmdir()
            return True
        time.sleep(0.02)
    return False


def tracing_permitted() -> str | None:
    """None when the ``tcp:tcp_probe`` tracepoint can be read here (root, tracefs, the event);
    else why not."""
    if sys.platform != "linux":
        return "tracefs needs Linux"
    if os.geteuid() != 0:
        return "tracefs needs root"
    fs = _Tracefs()
    try:
        root = fs.acquire()
        for event in ("tcp_probe", "tcp_retransmit_skb"):
            if not (root / "events" / "tcp" / event / "enable").exists():
                return f"this kernel has no tcp:{event} tracepoint"
        if not (root / "instances").is_dir():
            return "this kernel's tracefs has no instances directory"
        return None
    except TracefsError as e:
        return str(e)
    finally:
        fs.release()


def tracing_instances() -> list[str]:
    """The tracefs instances this module made that exist now (of any process; mounting tracefs
    privately for the look if it is not mounted)."""
    fs = _Tracefs()
    try:
        root = fs.acquire()
        return sorted(p.name for p in (root / "instances").iterdir() if _INSTANCE.match(p.name))
    except (TracefsError, OSError):
        return []
    finally:
        fs.release()


def _remove_instance(directory: Path) -> bool:
    """Disable an instance's events and remove it (retrying while a reader lets go)."""
    for event in ("tcp_probe", "tcp_retransmit_skb"):
        with contextlib.suppress(OSError):
            write(directory / "events" / "tcp" / event / "enable", "0")
    for _ in range(50):
        try:
            directory.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            time.sleep(0.02)
    return False


class Tracer:
    """A private tracefs instance with ``tcp_probe`` and ``tcp_retransmit_skb`` filtered on one
    connection, read from ``trace_pipe`` by a thread while the transfer runs."""

    def __init__(self) -> None:
        self._fs = _Tracefs()
        self.instance: Path | None = None
        self.lines: list[str] = []
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def open(self) -> None:
        """Make and configure the instance (events not yet enabled)."""
        root = self._fs.acquire()
        instances = root / "instances"
        for event in ("tcp_probe", "tcp_retransmit_skb"):
            if not (root / "events" / "tcp" / event).is_dir():
                raise TracefsError(f"this kernel has no tcp:{event} tracepoint")
        directory = instances / f"startlab-{os.getpid()}-{next(_RUNS)}"
        self.instance = directory  # before it exists: a signal handler that runs right after mkdir removes it
        try:
            directory.mkdir()
        except OSError as e:
            self.instance = None
            raise TracefsError(f"cannot make a tracefs instance {directory}: {e}") from e
        write(directory / "trace_clock", "mono")
        write(directory / "buffer_size_kb", "4096")

    def start(self, sport: int, dport: int, cookie: int) -> None:
        """Filter on the sender's socket (ports; tcp_probe also its cookie), start reading, enable."""
        assert self.instance is not None
        ports = f"sport == {sport} && dport == {dport}"
        tcp = self.instance / "events" / "tcp"
        write(tcp / "tcp_probe" / "filter", f"{ports} && sock_cookie == {cookie}")
        write(tcp / "tcp_retransmit_skb" / "filter", ports)
        self._thread = threading.Thread(target=self._read, args=(self.instance / "trace_pipe",), name="startlab-trace", daemon=True)
        self._thread.start()
        write(tcp / "tcp_probe" / "enable", "1")
        write(tcp / "tcp_retransmit_skb" / "enable", "1")

    def _read(self, pipe: Path) -> None:
        # The thread opens and closes the pipe itself: an open file keeps the instance from being
        # removed, and a signal handler in the main thread must never find one half-made.
        try:
            fd = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)
        except OSError as e:
            self.error = f"cannot open {pipe}: {e}"
            return
        pending = b""
        try:
            while True:
                try:
                    data = os.read(fd, 1 << 16)
                except BlockingIOError:
                    data = b""
                except OSError as e:
                    self.error = f"reading trace_pipe failed: {e}"
                    break
                if data:
                    pending += data
                    *complete, pending = pending.split(b"\n")
                    self.lines.extend(line.decode("utf-8", "replace") for line in complete)
                elif self._stop.is_set():
                    break
                else:
                    time.sleep(0.005)
        finally:
            os.close(fd)
            if pending:
                self.lines.append(pending.decode("utf-8", "replace"))

    def stop(self) -> list[str]:
        """Disable the events, read what is left and return every line read."""
        if self.instance is not None:
            for event in ("tcp_probe", "tcp_retransmit_skb"):
                with contextlib.suppress(OSError):
                    write(self.instance / "events" / "tcp" / event / "enable", "0")
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        return self.lines

    def close(self) -> list[str]:
        """Stop, remove the instance and unmount a private tracefs; returns what is left (empty
        when all is done) and may be called again to retry."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=10)
        left = []
        if self.instance is not None:
            if _remove_instance(self.instance):
                self.instance = None
            else:
                left.append(f"the tracefs instance {self.instance} could not be removed")
        if self.instance is None and not self._fs.release():
            left.append(f"tracefs could not be unmounted from {self._fs.mounted}")
        return left


# Lines of trace_pipe: "<comm>-<pid> [<cpu>] <flags> <seconds>: <event>: <key>=<value> ...".
_EVENT = re.compile(r"\s(\d+\.\d+): (tcp_probe|tcp_retransmit_skb): (.*)$")
LOST_EVENTS = re.compile(r"\[LOST (\d+) EVENTS\]")


def parse_trace_line(line: str) -> tuple[str, float, dict[str, str]] | None:
    """``(event, seconds, fields)`` of one ``trace_pipe`` line of ``tcp_probe`` or
    ``tcp_retransmit_skb``, or None for any other line (blank, lost-events notice, garbage)."""
    match = _EVENT.search(line)
    if match is None:
        return None
    fields = {}
    for token in match.group(3).split():
        key, sep, value = token.partition("=")
        if sep and key:
            fields[key] = value
    return match.group(2), float(match.group(1)), fields


def recover() -> list[str]:
    """Remove the tracefs instances and private tracefs mounts of processes that died (SIGKILL, a
    crash); returns what was done."""
    done = []
    fs = _Tracefs()
    try:
        instances = fs.acquire() / "instances"
        for d in instances.iterdir() if instances.is_dir() else []:
            match = _INSTANCE.match(d.name)
            if match and not alive(int(match.group(1))) and _remove_instance(d):
                done.append(f"removed the tracefs instance {d.name}")
    except (TracefsError, OSError):
        pass  # no tracefs here: no instance can have been left either
    finally:
        fs.release()
    for point in _tracefs_mounts():
        match = _PRIVATE_MOUNT.match(point.name)
        if _is_private(point) and match and not alive(int(match.group(1))):
            done.append(f"unmounted {point}" if _unmount(point) else f"could not unmount {point}")
    return done
