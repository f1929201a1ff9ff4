"""The papers' startup algorithms as BPF congestion controls in the running kernel (issue 19,
docs/KERNEL-BPF.md).

Each algorithm is one C file in ``startlab/real/bpf/`` (``lss.bpf.c``, ...) on a shared frame
(``startlab_ca.h``, ``startlab_ops.h``) that mirrors startlab's controller, so that the same ACKs
give the same window as the sans-IO Rust algorithm. It is compiled with the packaged toolchain
(``clang -target bpf``, against a ``vmlinux.h`` that ``bpftool`` dumps from the running kernel's
BTF) into a ``tcp_congestion_ops`` struct_ops object, and registered with ``bpftool struct_ops
register``: it then appears in ``/proc/sys/net/ipv4/tcp_available_congestion_control`` under its
kernel name (``sl_lss_r``) and any socket may select it with ``TCP_CONGESTION``; the testbed runs
it as ``stack = "kernel:bpf-lss"``.

Names: ``bpf-NAME`` runs with Reno avoidance, ``bpf-NAME+cubic`` with CUBIC-like avoidance
(kernel names ``sl_<short>_r`` and ``sl_<short>_c``). Compile-time parameters (``-D``) select an
algorithm's parameters: ``load("bpf-lss", params={"MAX_SSTHRESH": 50})``.

Registration is global to the machine and outlives the process, so whoever registers unregisters:
:func:`unload` always works (it unregisters whatever startlab registered under that name, and says
so when nothing was), :func:`loaded` registers for the length of a ``with`` block and unregisters
after it even on failure, and a registration whose process died is listed in a journal under
``/run/startlab`` that :func:`recover` (and every later :func:`loaded`) undoes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from .system import STATE_DIR, RealSystemError, alive, available_congestion_controls

#: The C sources, shipped inside the package.
SOURCES = Path(__file__).resolve().parent / "bpf"
#: Where objects are built (per kernel release and source digest) and the journal kept.
CACHE = Path(os.environ.get("STARTLAB_BPF_CACHE", "/var/cache/startlab/bpf"))
_BTF = Path("/sys/kernel/btf/vmlinux")


@dataclass(frozen=True)
class Algorithm:
    """One BPF startup algorithm: its source file, its short kernel name and the startlab
    algorithm it ports (whose sans-IO version the conformance test compares it with)."""

    source: str
    short: str
    sim: str
    summary: str


#: Every BPF algorithm, by startlab name without the avoidance suffix.
ALGORITHMS: dict[str, Algorithm] = {
    "bpf-slow-start": Algorithm("slow_start.bpf.c", "ss", "slow-start", "standard slow start, cwnd += min(N, SMSS) per ACK"),
    "bpf-lss": Algorithm("lss.bpf.c", "lss", "lss", "Limited Slow-Start (RFC 3742), int(SMSS/K) per ACK above max_ssthresh"),
    "bpf-smooth-start": Algorithm("smooth_start.bpf.c", "smooth", "smooth-start", "Smooth-start: the last d doublings below ssthresh over k RTTs each"),
    "bpf-hystart": Algorithm("hystart.bpf.c", "hystart", "hystart", "HyStart as the paper's Algorithm 1: ACK train and delay increase"),
    "bpf-hystart++": Algorithm("hystartpp.bpf.c", "hspp", "hystart++", "HyStart++ (RFC 9406) with Conservative Slow Start"),
    "bpf-paced-start": Algorithm("paced_start.bpf.c", "past", "paced-start", "Paced Start: paced trains through sk_pacing_rate and a binary search on the rate"),
    "bpf-careful-resume": Algorithm("careful_resume.bpf.c", "cr", "careful-resume", "Careful Resume (RFC 9959): a paced jump to half a compiled-in saved capacity (SAVED_RATE, SAVED_RTT_US), Safe Retreat"),
    "bpf-suss": Algorithm("suss.bpf.c", "suss", "suss", "SUSS over Linux HyStart: fourfold rounds while the ACK train predicts room, the extra data paced"),
}

#: Avoidance suffixes: name suffix -> (kernel name suffix, compile flag).
AVOIDANCE = {"": ("r", None), "+reno": ("r", None), "+cubic": ("c", "AVOID_CUBIC")}


class KernelBpfError(RealSystemError):
    """A BPF algorithm could not be built, loaded or unloaded; the message says which step and why."""


@dataclass(frozen=True)
class Variant:
    """An algorithm with its avoidance: what is built and registered."""

    name: str  #: canonical startlab name, e.g. ``bpf-lss+cubic`` (Reno has no suffix)
    algorithm: Algorithm
    avoidance: str  #: ``reno`` or ``cubic``
    kernel_name: str  #: the ``TCP_CONGESTION`` name, e.g. ``sl_lss_c``
    flag: str | None


def variant(name: str) -> Variant:
    """The variant a name gives (``bpf-lss``, ``bpf-lss+cubic``, ``kernel:bpf-lss``); an unknown
    name raises :class:`ValueError` listing the accepted ones."""
    bare = name.strip().lower().removeprefix("kernel:")
    # the avoidance suffix is the last "+word" (bpf-hystart++ has pluses of its own)
    base, key = bare, ""
    for suffix in ("+reno", "+cubic"):
        if bare.endswith(suffix) and bare[: -len(suffix)] in ALGORITHMS:
            base, key = bare[: -len(suffix)], suffix
    if base not in ALGORITHMS:
        accepted = ", ".join(f"{n}[+cubic]" for n in ALGORITHMS if (SOURCES / ALGORITHMS[n].source).is_file())
        raise ValueError(f"{name!r} is not a BPF algorithm; accepted: {accepted}")
    algorithm = ALGORITHMS[base]
    short, flag = AVOIDANCE[key]
    avoidance = "cubic" if flag else "reno"
    canonical = base if avoidance == "reno" else f"{base}+cubic"
    return Variant(canonical, algorithm, avoidance, f"sl_{algorithm.short}_{short}", flag)


def names() -> list[str]:
    """Every BPF algorithm name whose source is present, Reno then CUBIC-like avoidance."""
    present = [n for n, a in ALGORITHMS.items() if (SOURCES / a.source).is_file()]
    return [*present, *(f"{n}+cubic" for n in present)]


# --- building ----------------------------------------------------------------------------------


def toolchain() -> str | None:
    """Why BPF algorithms cannot be built here (None: they can)."""
    missing = [tool for tool in ("clang", "bpftool") if shutil.which(tool) is None]
    if missing:
        return f"{' and '.join(missing)} not found (Debian: apt-get install clang llvm bpftool libbpf-dev)"
    if not Path("/usr/include/bpf/bpf_helpers.h").is_file():
        return "libbpf's headers (bpf/bpf_helpers.h) not found (Debian: apt-get install libbpf-dev)"
    if not _BTF.is_file():
        return f"{_BTF} not found: this kernel has no BTF, which BPF congestion controls need"
    return None


def _run(command: list[str], what: str) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except FileNotFoundError as e:
        raise KernelBpfError(f"{what}: {e.filename} not found; {toolchain() or ''}".rstrip("; ")) from None
    if done.returncode != 0:
        raise KernelBpfError(f"{what} failed ({' '.join(command[:3])} ...): {(done.stderr or done.stdout).strip()[-2000:]}")
    return done.stdout


def _vmlinux_h() -> Path:
    """The running kernel's types as C (``bpftool btf dump``), once per kernel release."""
    directory = CACHE / platform.release()
    header = directory / "vmlinux.h"
    if not header.is_file():
        directory.mkdir(parents=True, exist_ok=True)
        text = _run(["bpftool", "btf", "dump", "file", str(_BTF), "format", "c"], "dumping the kernel's BTF")
        tmp = header.with_suffix(f".h.{os.getpid()}")
        tmp.write_text(text)
        os.replace(tmp, header)
    return header


def _defines(params: Mapping[str, int] | None) -> list[str]:
    out = []
    for key, value in sorted((params or {}).items()):
        if not re.fullmatch(r"[A-Z][A-Z0-9_]*", key):
            raise ValueError(f"BPF parameter {key!r}: expected an upper-case C macro name such as MAX_SSTHRESH")
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"BPF parameter {key} = {value!r}: expected a non-negative integer")
        out.append(f"-D{key}={value}")
    return out


def build(name: str, params: Mapping[str, int] | None = None) -> Path:
    """The object file of ``name`` (compiled if not yet in the cache for this kernel, these
    sources and these parameters)."""
    v = variant(name)
    reason = toolchain()
    if reason is not None:
        raise KernelBpfError(f"cannot build {v.name}: {reason}")
    source = SOURCES / v.algorithm.source
    if not source.is_file():
        raise KernelBpfError(f"{v.name}: its BPF port ({source.name}) is not written yet; docs/KERNEL-BPF.md says what it needs")
    flags = ["-O2", "-g", "-target", "bpf", "-D__TARGET_ARCH_x86", f'-DCA_NAME="{v.kernel_name}"', f"-DOPS={v.kernel_name}", *_defines(params)]
    if v.flag:
        flags.append(f"-D{v.flag}")
    digest = hashlib.sha256()
    for path in sorted(SOURCES.glob("*.[ch]")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    digest.update(" ".join(flags).encode())
    header = _vmlinux_h()
    out = header.parent / f"{v.kernel_name}-{digest.hexdigest()[:16]}.o"
    if not out.is_file():
        tmp = out.with_suffix(f".o.{os.getpid()}")
        _run(["clang", *flags, f"-I{header.parent}", f"-I{SOURCES}", "-c", str(source), "-o", str(tmp)], f"compiling {source.name}")
        os.replace(tmp, out)
    return out


# --- loading -----------------------------------------------------------------------------------


def available() -> list[str]:
    """The congestion controls the kernel offers now."""
    return available_congestion_controls()


def _journal() -> Path:
    return STATE_DIR / "kernelbpf.json"


def _journal_entries() -> dict[str, int]:
    try:
        entries = json.loads(_journal().read_text())
        return {str(k): int(v) for k, v in entries.items()}
    except (OSError, ValueError, AttributeError):
        return {}


def _write_journal(entries: dict[str, int]) -> None:
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    if entries:
        tmp = _journal().with_suffix(f".json.{os.getpid()}")
        tmp.write_text(json.dumps(entries, sort_keys=True))
        os.replace(tmp, _journal())
    else:
        _journal().unlink(missing_ok=True)


def load(name: str, params: Mapping[str, int] | None = None, *, keep: bool = False) -> bool:
    """Register ``name`` in the kernel (building it first if needed). Returns False when it was
    already registered (nothing done: the registered one stays, whatever its parameters).

    ``keep``: the registration outlives this process (``startlab kernel load``) until
    :func:`unload`; otherwise it is journaled with this process's id, and :func:`recover`
    unregisters it once this process is gone."""
    v = variant(name)
    if v.kernel_name in available():
        return False
    obj = build(v.name, params)
    entries = _journal_entries()
    entries[v.kernel_name] = 0 if keep else os.getpid()
    _write_journal(entries)  # first: a signal may come between registering and writing
    try:
        _run(["bpftool", "struct_ops", "register", str(obj)], f"registering {v.name}")
    except KernelBpfError:
        _forget(v.kernel_name)
        raise
    if v.kernel_name not in available():
        _unregister(v.kernel_name)
        raise KernelBpfError(f"bpftool registered {obj.name} but {v.kernel_name} is not among the kernel's congestion controls")
    return True


def _unregister(kernel_name: str) -> bool:
    """Unregister the struct_ops of that name; True if it was registered. The kernel refuses a
    second congestion control of the same name, so there is at most one. Sockets still using it
    keep it (``bpftool struct_ops list`` shows it) until they close; the name is gone from the
    available ones at once."""
    if kernel_name not in available():
        return False
    done = subprocess.run(["bpftool", "struct_ops", "unregister", "name", kernel_name], capture_output=True, text=True)
    if done.returncode != 0 and kernel_name in available():
        raise KernelBpfError(f"unregistering {kernel_name} failed: {(done.stderr or done.stdout).strip()}")
    return True


def _forget(kernel_name: str) -> None:
    entries = _journal_entries()
    entries.pop(kernel_name, None)
    _write_journal(entries)


def unload(name: str) -> bool:
    """Unregister ``name`` from the kernel; True if it was registered. Sockets that use it keep
    running it until they close (the kernel holds the struct_ops until then)."""
    v = variant(name)
    if shutil.which("bpftool") is None:
        if v.kernel_name in available():
            raise KernelBpfError(f"cannot unload {v.name}: bpftool not found (Debian: apt-get install bpftool)")
        return False
    found = _unregister(v.kernel_name)
    _forget(v.kernel_name)
    return found


def recover() -> list[str]:
    """Unregister what runs whose process died left registered (journal; not what ``startlab
    kernel load`` registered to keep); returns what was done."""
    done = []
    for kernel_name, pid in sorted(_journal_entries().items()):
        if pid == 0 or pid == os.getpid() or alive(pid):
            continue
        try:
            if _unregister(kernel_name):
                done.append(f"unregistered {kernel_name} (left by process {pid})")
        except KernelBpfError as e:
            done.append(f"could not unregister {kernel_name}: {e}")
            continue
        _forget(kernel_name)
    return done


@contextlib.contextmanager
def loaded(name: str, params: Mapping[str, int] | None = None) -> Iterator[str]:
    """Register ``name`` for the length of the block (unless it already was) and unregister it
    afterwards, also after a failure; yields the kernel name to select with ``TCP_CONGESTION``."""
    recover()
    ours = load(name, params)
    try:
        yield variant(name).kernel_name
    finally:
        if ours:
            unload(name)


def status() -> list[dict[str, object]]:
    """Every BPF algorithm: name, kernel name, what it ports, whether it is registered now and
    whether startlab's journal says a startlab process registered it."""
    registered = set(available())
    journal = _journal_entries()
    rows: list[dict[str, object]] = []
    for name in names():
        v = variant(name)
        rows.append(
            {
                "name": v.name, "kernel_name": v.kernel_name, "ports": v.algorithm.sim, "avoidance": v.avoidance,
                "loaded": v.kernel_name in registered, "loaded_by": journal.get(v.kernel_name), "summary": v.algorithm.summary,
            }
        )  # fmt: skip
    return rows


def permitted() -> str | None:
    """Why BPF congestion controls cannot be loaded here (None: they can): the toolchain, BTF,
    and root."""
    if os.geteuid() != 0:
        return "loading BPF congestion controls needs root (CAP_BPF and CAP_NET_ADMIN)"
    return toolchain()
