"""Connection-vector files for trace-driven request/response replay (``[[replay]]``).

Scharf et al. replay Internet traffic traces (their ref. [21], the WAN-in-Lab tmix connection
vectors) among N = 450 client-server pairs on a dumbbell with nine RTTs between 4 and 200 ms, at a
downlink load of about 0.3 (their Fig. 16 and 17). A scenario replays such a file with::

    [[replay]]
    name = "tmix"            # flows are named tmix-<connection>
    file = "vectors.csv"     # or vectors.parquet; relative to the scenario file

This module reads and checks those files (:func:`read`), converts Parquet to the CSV text the
native side parses (:func:`parquet_to_csv_text`), writes them (:func:`write`), generates a
*synthetic* set shaped like the paper's (:func:`generate`) and a scenario that runs it
(:func:`scenario_toml`). docs/REPLAY.md is the user's guide.

File format
===========

One row per *epoch* (one request/response exchange, tmix's a-t1-b-t2 vector with a = request,
b = response and the think time before the request), six columns in this order:

=============  ===========================================================================
``connection`` non-negative integer id; all rows of one connection are contiguous (together),
               in epoch order. Ids need not be sorted or dense.
``start``      seconds (a real number >= 0) at which the connection opens; the same on every
               row of the connection.
``rtt_class``  non-negative integer: the dumbbell pair the connection runs on (the scenario's
               ``topology.rtts`` gives each pair's RTT); the same on every row.
``request``    request bytes, integer >= 1 (client -> server).
``think``      seconds >= 0 the client waits after the previous epoch's response is complete
               before it sends this epoch's request (first epoch: after the connection opens).
``response``   response bytes, integer >= 1 (server -> client).
=============  ===========================================================================

With ``direction = "forward"`` the server of a connection of class ``k`` is ``s{k}`` and its client
``d{k}`` (responses cross the bottleneck left to right); ``"reverse"`` swaps them.

**CSV** (suffix ``.csv``), exactly:

- UTF-8 text (no byte-order mark); lines end with LF or CRLF; the last line may lack its newline.
- A line whose first character other than space or tab is ``#`` is a comment; a line of only
  spaces and tabs (or empty) is blank. Both are skipped wherever they are.
- The first other line is the header: ``connection,start,rtt_class,request,think,response``.
- Every further line is one epoch: six fields separated by commas. Spaces and tabs around a field
  are ignored; there is no quoting, no empty field and no trailing comma.
- Integer fields (``connection``, ``rtt_class``, ``request``, ``response``): decimal digits with an
  optional ``+``, at most 2^63 - 1.
- Real fields (``start``, ``think``): a decimal number with an optional fraction and exponent
  (``12``, ``0.5``, ``.5``, ``1e-05``, ``2.5E+3``), optional ``+``; finite. ``inf``, ``nan``
  and hexadecimal are refused. :func:`write` writes Python's ``repr`` of each float, the shortest
  text that reads back to the same double, so a round trip is exact.
- At least one epoch.

A negative number is a valid token whose *value* is refused (``start: -1.0 is negative``).
Errors name the file, the 1-based line number and the column: ``vectors.csv: line 7: response:
0 bytes; expected at least 1``.

**Parquet** (suffix ``.parquet``): one table with exactly these six columns (in any order), no
nulls; ``connection``, ``rtt_class``, ``request`` and ``response`` of an integer type, ``start``
and ``think`` of a floating-point or integer type. The same value rules apply; errors name the
1-based row number (``row 1`` is the first row). :func:`write` stores int64 and float64 columns and
keeps the ``note`` (see below) in the file's key-value metadata under ``startlab.note``.

A ``# synthetic: ...`` comment in the first line of a CSV file (or the ``startlab.note`` metadata of
a Parquet file) is kept by :func:`read` in ``DataFrame.attrs["note"]`` and written back by
:func:`write`.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._core import ScenarioError
from .units import Rate, duration_s, rate_bps

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

#: The columns of a connection-vector file, in file order.
COLUMNS: tuple[str, ...] = ("connection", "start", "rtt_class", "request", "think", "response")

#: Integer columns; the others (``start``, ``think``) are seconds.
INTEGER_COLUMNS = frozenset({"connection", "rtt_class", "request", "response"})

#: The nine RTTs (ms) of the TCP evaluation suite's dumbbell (Scharf's ref. [19]): three left nodes
#: with one-way access delays 0, 12 and 25 ms, three right nodes with 2, 37 and 75 ms, and a
#: zero-delay central link; path (a, b) has the RTT 2(a + b). This gives exactly the range "between
#: 4 ms and 200 ms" that Scharf et al. state for Fig. 16.
DEFAULT_RTTS_MS: tuple[float, ...] = (4.0, 28.0, 54.0, 74.0, 98.0, 124.0, 150.0, 174.0, 200.0)

#: Scharf et al., Sect. 4: "a central bottleneck with r = 10 Mbit/s, a drop-tail buffer ... the
#: buffer length is B = 50 packets". Fig. 16 does not restate them, so these defaults hold.
DEFAULT_RATE = "10Mbps"
DEFAULT_BUFFER_PKTS = 50

#: Responses: the bounded Pareto law of Scharf's load experiments (Sect. 4; Fig. 15's second
#: workload, N = 400, m = 10 kB): mean 10 kB, shape 1.1, cutoff 10 MB, scale solved from the mean
#: as the simulator's ``dist = "pareto"`` does.
RESPONSE_MEAN = 10_000.0
RESPONSE_SHAPE = 1.1
RESPONSE_CUTOFF = 10e6

#: Requests: lognormal, median 300 B (ln-mean ln 300, ln-sd 0.8), clipped to [1, 1448] bytes (one
#: segment of the default MSS).
REQUEST_MEDIAN = 300.0
REQUEST_SIGMA = 0.8
REQUEST_MAX = 1448

#: Connections open uniformly in the first 10 % of the run; each connection's epochs are planned to
#: end, with generous transfer-time estimates, by 95 % of it.
START_FRACTION = 0.10
END_FRACTION = 0.95

#: Segment payload and initial window (segments) used only to estimate transfer times.
_MSS = 1448
_IW = 3

_SUFFIXES = (".csv", ".parquet")
_INT = re.compile(r"[+-]?[0-9]+\Z")
_REAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_INT64_MAX = 2**63 - 1
_NOTE_KEY = b"startlab.note"



# --- reading ------------------------------------------------------------------------------------


def read(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read and check a connection-vector file (``.csv`` or ``.parquet``, see the module doc).

    Returns one row per epoch with the columns of :data:`COLUMNS` (int64, float64, int64, int64,
    float64, int64) and a RangeIndex; ``attrs["note"]`` holds the file's ``# synthetic: ...`` note
    if it has one. Every problem is a :class:`startlab.ScenarioError` naming the file and the line
    (CSV) or row (Parquet).
    """
    name = str(path)
    suffix = _suffix(name)
    if suffix == ".csv":
        try:
            data = Path(path).read_bytes()
        except FileNotFoundError:
            raise ScenarioError(f"{name}: vector file not found") from None
        except OSError as e:
            raise ScenarioError(f"{name}: cannot read: {e.strerror or e}") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ScenarioError(f"{name}: not UTF-8 text ({e.reason} at byte {e.start})") from None
        columns, places, note = _parse_csv(text, name)
    else:
        columns, places, note = _read_parquet(name)
    return _frame(columns, places, note)


def _suffix(name: str) -> str:
    suffix = Path(name).suffix.lower()
    if suffix not in _SUFFIXES:
        shown = f"'{Path(name).suffix}'" if Path(name).suffix else "no suffix"
        raise ScenarioError(f"{name}: a vector file is .csv or .parquet, not {shown}")
    return suffix


def _parse_csv(text: str, name: str) -> tuple[dict[str, list[Any]], Callable[[int], str], str | None]:
    """The columns of CSV ``text`` as Python lists, the place (``line N``) of each row, and the
    note of a first-line ``# synthetic`` comment."""
    lines = text.split("\n")
    header_line = 0
    note: str | None = None
    rows: dict[str, list[Any]] = {c: [] for c in COLUMNS}
    line_of: list[int] = []
    for number, raw in enumerate(lines, start=1):
        line = raw[:-1] if raw.endswith("\r") else raw
        stripped = line.strip(" \t")
        if not stripped:
            continue
        if stripped.startswith("#"):
            if number == 1 and stripped[1:].strip().startswith("synthetic"):
                note = stripped[1:].strip()
            continue
        fields = [f.strip(" \t") for f in line.split(",")]
        if not header_line:
            _check_header(fields, f"{name}: line {number}")
            header_line = number
            continue
        where = f"{name}: line {number}"
        if len(fields) != len(COLUMNS):
            raise ScenarioError(f"{where}: expected {len(COLUMNS)} comma-separated fields ({','.join(COLUMNS)}), found {len(fields)}")
        for column, field in zip(COLUMNS, fields):
            rows[column].append(_int(field, where, column) if column in INTEGER_COLUMNS else _real(field, where, column))
        line_of.append(number)
    if not header_line:
        raise ScenarioError(f"{name}: no header line; expected {','.join(COLUMNS)}")
    if not line_of:
        raise ScenarioError(f"{name}: no epochs after the header (line {header_line})")
    return rows, lambda i: f"{name}: line {line_of[i]}", note


def _check_header(fields: list[str], where: str) -> None:
    if fields == list(COLUMNS):
        return
    expected = ",".join(COLUMNS)
    for column in COLUMNS:
        if column not in fields:
            raise ScenarioError(f"{where}: missing column '{column}' in the header; expected {expected}")
    for field in fields:
        if field not in COLUMNS:
            raise ScenarioError(f"{where}: unknown column '{field}' in the header; expected {expected}")
        if fields.count(field) > 1:
            raise ScenarioError(f"{where}: column '{field}' appears twice in the header; expected {expected}")
    raise ScenarioError(f"{where}: the header's columns are out of order; expected {expected}")


def _int(field: str, where: str, column: str) -> int:
    if not _INT.match(field):
        shown = repr(field) if field else "an empty field"
        raise ScenarioError(f"{where}: {column}: {shown} is not an integer")
    value = int(field)
    if value > _INT64_MAX:
        raise ScenarioError(f"{where}: {column}: {field} is too large (at most 2^63 - 1)")
    return value


def _real(field: str, where: str, column: str) -> float:
    if not _REAL.match(field):
        shown = repr(field) if field else "an empty field"
        raise ScenarioError(f"{where}: {column}: {shown} is not a number of seconds (a finite decimal such as 1.5 or 2e-3)")
    value = float(field)
    if not math.isfinite(value):
        raise ScenarioError(f"{where}: {column}: {field} is not finite")
    return value


def _read_parquet(name: str) -> tuple[dict[str, Any], Callable[[int], str], str | None]:
    """The columns of a Parquet vector file as NumPy arrays, the place (``row N``) of each row,
    and its note."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    if not os.path.isfile(name):
        raise ScenarioError(f"{name}: vector file not found")
    try:
        table = pq.read_table(name)
    except (pa.ArrowException, OSError, ValueError) as e:
        raise ScenarioError(f"{name}: not a readable Parquet file ({_first_line(e)})") from None
    names = list(table.column_names)
    for column in COLUMNS:
        if column not in names:
            raise ScenarioError(f"{name}: missing column '{column}'; expected the columns {', '.join(COLUMNS)}")
    for column in names:
        if column not in COLUMNS:
            raise ScenarioError(f"{name}: unknown column '{column}'; expected the columns {', '.join(COLUMNS)}")
        if names.count(column) > 1:
            raise ScenarioError(f"{name}: column '{column}' appears twice")
    if table.num_rows == 0:
        raise ScenarioError(f"{name}: no epochs (the table has no rows)")

    def where(i: int) -> str:
        return f"{name}: row {i + 1}"

    columns: dict[str, Any] = {}
    for column in COLUMNS:
        chunked = table.column(column)
        kind = chunked.type
        if column in INTEGER_COLUMNS:
            if not pa.types.is_integer(kind):
                raise ScenarioError(f"{name}: column '{column}' is of type {kind}; expected an integer type")
        elif not (pa.types.is_floating(kind) or pa.types.is_integer(kind)):
            raise ScenarioError(f"{name}: column '{column}' is of type {kind}; expected a floating-point type (seconds)")
        if chunked.null_count:
            first = int(np.flatnonzero(pc.is_null(chunked).to_numpy(zero_copy_only=False))[0])
            raise ScenarioError(f"{where(first)}: {column}: missing value (null)")
        values = chunked.to_numpy()
        if column in INTEGER_COLUMNS:
            if values.dtype.kind == "u" and len(values) and values.max() > _INT64_MAX:
                first = int(np.flatnonzero(values > _INT64_MAX)[0])
                raise ScenarioError(f"{where(first)}: {column}: {values[first].item()} is too large (at most 2^63 - 1)")
            columns[column] = values.astype(np.int64)
        else:
            floats = values.astype(np.float64)
            bad = ~np.isfinite(floats)
            if bad.any():
                first = int(np.flatnonzero(bad)[0])
                raise ScenarioError(f"{where(first)}: {column}: {floats[first].item()!r} is not finite")
            columns[column] = floats
    metadata = table.schema.metadata or {}
    note = metadata[_NOTE_KEY].decode("utf-8", "replace") if _NOTE_KEY in metadata else None
    return columns, where, note


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def _frame(columns: Mapping[str, Any], where: Callable[[int], str], note: str | None) -> pd.DataFrame:
    """Check the values of the columns (lists or arrays of equal length) and build the frame."""
    import numpy as np
    import pandas as pd

    arrays = {c: np.asarray(columns[c], dtype=np.int64 if c in INTEGER_COLUMNS else np.float64) for c in COLUMNS}
    for column in ("start", "think"):
        bad = ~np.isfinite(arrays[column])
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ScenarioError(f"{where(i)}: {column}: {arrays[column][i].item()!r} is not finite")
    for column, least, what in (
        ("connection", 0, "is negative; expected an id >= 0"),
        ("rtt_class", 0, "is negative; expected a pair index >= 0"),
        ("start", 0, "is negative; expected seconds >= 0"),
        ("think", 0, "is negative; expected seconds >= 0"),
    ):
        bad = arrays[column] < least
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ScenarioError(f"{where(i)}: {column}: {arrays[column][i].item()!r} {what}")
    for column in ("request", "response"):
        bad = arrays[column] < 1
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ScenarioError(f"{where(i)}: {column}: {arrays[column][i].item()} bytes; expected at least 1")
    # Connections: contiguous runs of one id, each id in one run, start and class fixed per run.
    connection = arrays["connection"]
    first_of_run = np.flatnonzero(np.r_[True, connection[1:] != connection[:-1]])
    ids = connection[first_of_run]
    if len(np.unique(ids)) != len(ids):
        seen: dict[int, int] = {}
        for row in first_of_run.tolist():
            cid = int(connection[row])
            if cid in seen:
                raise ScenarioError(
                    f"{where(row)}: connection: connection {cid} appears again after other connections; the rows of "
                    f"a connection must be contiguous (its earlier rows end at {_place(where, seen[cid])})"
                )
            end = first_of_run[first_of_run > row]
            seen[cid] = int(end[0]) - 1 if len(end) else len(connection) - 1
    run_of_row = np.cumsum(np.r_[True, connection[1:] != connection[:-1]]) - 1
    head = first_of_run[run_of_row]
    for column in ("start", "rtt_class"):
        values = arrays[column]
        bad = values != values[head]
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ScenarioError(
                f"{where(i)}: {column}: {values[i].item()!r} differs from {values[head[i]].item()!r} on the connection's first row "
                f"({_place(where, int(head[i]))}); every row of connection {int(connection[i])} must have the same {column}"
            )
    frame = pd.DataFrame(arrays)
    if note is not None:
        frame.attrs["note"] = note
    return frame


def _place(where: Callable[[int], str], row: int) -> str:
    """``line N`` or ``row N`` of a row, without the file name."""
    return where(row).rsplit(": ", 1)[-1]


def parquet_to_csv_text(path: str) -> str:
    """The content of a Parquet vector file as CSV text in the file format (module doc).

    The native side calls this for ``[[replay]] file = "....parquet"``. The text is the header line
    and one line per row, floats written with ``repr`` (exact round trip), preceded by the file's
    note as a ``# `` comment line if it has one. A bad or unreadable file raises ``ValueError``
    naming the file and, where it applies, the row and column; nothing else is raised.
    """
    try:
        if _suffix(str(path)) != ".parquet":
            raise ScenarioError(f"{path}: not a .parquet file")
        frame = _frame(*_read_parquet(str(path)))
        return _csv_text(frame)
    except ScenarioError as e:
        raise ValueError(str(e)) from None
    except Exception as e:  # noqa: BLE001 - the native caller expects ValueError only
        raise ValueError(f"{path}: cannot read the vector file ({type(e).__name__}: {_first_line(e)})") from None


# --- writing ------------------------------------------------------------------------------------


def _csv_text(frame: pd.DataFrame) -> str:
    """The CSV text of a vector frame (its note first, as a comment line)."""
    lines: list[str] = []
    note = frame.attrs.get("note")
    if note:
        lines.append("# " + " ".join(str(note).split()))
    lines.append(",".join(COLUMNS))
    cols = [frame[c].tolist() for c in COLUMNS]
    conv: list[Callable[[Any], str]] = [str if c in INTEGER_COLUMNS else (lambda v: repr(float(v))) for c in COLUMNS]
    c0, c1, c2, c3, c4, c5 = conv
    for a, b, c, d, e, f in zip(*cols):
        lines.append(f"{c0(a)},{c1(b)},{c2(c)},{c3(d)},{c4(e)},{c5(f)}")
    return "\n".join(lines) + "\n"


def write(frame: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write a vector frame (the columns of :data:`COLUMNS`) as CSV or Parquet, by the suffix of
    ``path``; returns the path. The frame's ``attrs["note"]`` (set by :func:`generate`: the
    synthetic caveat) becomes the CSV's first comment line or the Parquet file's ``startlab.note``
    metadata. The frame is checked first (:class:`startlab.ScenarioError`), so what is written
    reads back."""
    import numpy as np

    out = Path(path)
    suffix = _suffix(str(out))
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise ScenarioError(f"{out}: the frame has no column '{missing[0]}'; expected the columns {', '.join(COLUMNS)}")
    def where(i: int) -> str:
        return f"{out}: row {i + 1} of the frame"

    values: dict[str, Any] = {}
    for column in COLUMNS:
        array = np.asarray(frame[column].to_numpy())
        if column in INTEGER_COLUMNS and array.dtype.kind != "i":
            if array.dtype.kind == "u":
                bad = array > _INT64_MAX
            elif array.dtype.kind == "f":
                bad = ~np.isfinite(array) | (array != np.floor(array)) | (np.abs(array) > 2.0**62)
            else:
                raise ScenarioError(f"{out}: column '{column}' is of type {array.dtype}; expected integers")
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ScenarioError(f"{where(i)}: {column}: {array[i].item()!r} is not an integer (at most 2^63 - 1)")
        elif column not in INTEGER_COLUMNS and array.dtype.kind not in "iuf":
            raise ScenarioError(f"{out}: column '{column}' is of type {array.dtype}; expected seconds (floats)")
        values[column] = array
    checked = _frame(values, where, None)
    checked.attrs.update(frame.attrs)
    if suffix == ".csv":
        out.write_text(_csv_text(checked), encoding="utf-8", newline="\n")
        return out
    import pyarrow as pa
    import pyarrow.parquet as pq

    fields = [pa.field(c, pa.int64() if c in INTEGER_COLUMNS else pa.float64(), nullable=False) for c in COLUMNS]
    note = checked.attrs.get("note")
    schema = pa.schema(fields, metadata={_NOTE_KEY: str(note).encode("utf-8")} if note else None)
    table = pa.Table.from_arrays([pa.array(np.ascontiguousarray(checked[c].to_numpy())) for c in COLUMNS], schema=schema)
    pq.write_table(table, out)
    return out


# --- the synthetic generator ---------------------------------------------------------------------


def generate(
    *,
    connections: int = 450,
    rtts_ms: Sequence[float] = DEFAULT_RTTS_MS,
    rate: Rate = DEFAULT_RATE,
    load: float = 0.3,
    duration: float | str = 300.0,
    seed: int = 1,
) -> pd.DataFrame:
    """A *synthetic* connection-vector set shaped like Scharf et al.'s Fig. 16 workload.

    **Not Scharf's traces.** The paper replays Internet traffic traces (its ref. [21], the
    WAN-in-Lab tmix connection vectors); they are not available here. This is a model with the
    paper's stated parameters, and every output says so (``attrs["note"]``, the CSV's first
    comment line, the Parquet metadata).

    What the paper gives (Sect. 4 and 5.4): N = 450 client-server pairs, nine RTTs between 4 and
    200 ms as [19] recommends, downlink load rho ~= 0.3; bottleneck r = 10 Mbit/s with a 50-packet
    drop-tail buffer (Sect. 4, "unless stated otherwise"; Fig. 16 states no other); responses in
    its load experiments bounded Pareto, shape 1.1, cutoff 10 MB, mean 125 kB or 10 kB.

    The model (all draws from ``numpy.random.Generator(PCG64(seed))``, as raw 64-bit outputs turned
    into uniforms and inverse CDFs, in a fixed order):

    - ``connections`` connections, ids 0 .. N-1 in order of opening; each opens at a uniform time
      in the first :data:`START_FRACTION` (10 %) of ``duration`` and runs on an RTT class drawn
      uniformly from ``rtts_ms`` (the paper does not say how the traces were spread over [19]'s
      nine paths). The default classes are [19]'s nine path RTTs, :data:`DEFAULT_RTTS_MS`.
    - Epochs per connection: geometric on {1, 2, ...} with mean
      ``max(1, B / (N * 10 kB))``, where ``B = load * duration * rate / 8`` is the target number of
      response bytes.
    - Requests: lognormal, median 300 B, ln-sd 0.8, rounded up and clipped to [1, 1448] bytes.
    - Responses: bounded Pareto, mean 10 kB, shape 1.1, cutoff 10 MB (the simulator's
      ``dist = "pareto"`` law), rounded up to whole bytes. Then every response is multiplied by
      one factor k = B / (sum of responses) and rounded (largest remainders get the leftover
      bytes), so the offered downlink load ``sum(response) * 8 / (duration * rate)`` equals
      ``load`` to the byte. The heavy tail makes k vary from seed to seed (0.77 to 1.23 over seeds
      0-39 with the defaults); the note records it. The sizes keep their law's shape; its mean and cutoff scale by k.
    - Think times, so that the epochs fit: each epoch is given a generous transfer estimate
      ``RTT * (2 + log2(1 + response / (3 * 1448 B))) + 8 * response / (rate * (1 - load))``
      (handshake and request round trips, slow-start rounds from an initial window of 3 segments,
      and serialisation at the capacity left by the load). A connection opening at ``t0`` has the
      free time ``F = 0.95 * duration - t0 - sum(estimates)``. Its n think times and a final idle
      gap are n + 1 independent exponential draws scaled to sum to F: the thinks of a Poisson
      process conditioned to fit, each nearly exponential with mean F / (n + 1), and the planned
      end of its last epoch before 95 % of the run. A connection whose estimates do not fit after
      its opening opens earlier (at 0 at the earliest). One that does not fit even from 0 (few
      connections with many exchanges on a long RTT) hands its last exchanges, one at a time, to
      the connection with the most time to spare, which keeps the load and the size laws; the note
      counts them (none with the defaults). If no connection has room, a ``ValueError`` says so
      (lower the load or lengthen the run).
    - Times are rounded to whole microseconds and sizes are whole bytes, so that the last-bit
      differences of math libraries between machines do not show: the same seed gives the same
      frame on any machine.

    Returns the frame of :func:`read` with ``attrs["note"]`` set to the synthetic caveat. Invalid
    arguments raise ``ValueError``.
    """
    import numpy as np
    import pandas as pd

    if isinstance(connections, bool) or not isinstance(connections, int) or connections < 1:
        raise ValueError(f"connections: {connections!r}; expected a whole number >= 1")
    rtts = _rtts(rtts_ms)
    bps = rate_bps(rate)
    if not (isinstance(load, (int, float)) and 0 < load < 1):
        raise ValueError(f"load: {load!r}; expected a fraction of the bottleneck rate above 0 and below 1")
    seconds = duration_s(duration)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ValueError(f"seed: {seed!r}; expected a whole number from 0 to 2^64 - 1")
    load = float(load)

    target = round(load * seconds * bps / 8)
    if target < connections:
        raise ValueError(
            f"load {load:g} of {_rate_text(bps)} over {_decimal(seconds)} s is {target} response bytes, fewer than one byte "
            f"per connection ({connections}); raise the load, rate or duration"
        )
    bits = np.random.Generator(np.random.PCG64(seed)).bit_generator

    def uniforms(n: int) -> np.ndarray:
        raw = np.asarray(bits.random_raw(n), dtype=np.uint64)
        return (raw >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)

    n = connections
    start = uniforms(n) * (START_FRACTION * seconds)
    klass = np.minimum((uniforms(n) * len(rtts)).astype(np.int64), len(rtts) - 1)
    mean_epochs = max(1.0, target / (n * RESPONSE_MEAN))
    if mean_epochs > 1.0:
        p = 1.0 / mean_epochs
        epochs = 1 + np.floor(np.log1p(-uniforms(n)) / math.log1p(-p)).astype(np.int64)
    else:
        uniforms(n)  # keep the order of the draws independent of this branch
        epochs = np.ones(n, dtype=np.int64)
    m = int(epochs.sum())
    # Requests: Box-Muller normals into a lognormal.
    u1, u2 = uniforms(m), uniforms(m)
    z = np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(2.0 * math.pi * u2)
    request = np.clip(np.ceil(REQUEST_MEDIAN * np.exp(REQUEST_SIGMA * z)), 1, REQUEST_MAX).astype(np.int64)
    # Responses: inverse CDF of the bounded Pareto on [x_m, cutoff].
    scale = pareto_scale(RESPONSE_MEAN, RESPONSE_SHAPE, RESPONSE_CUTOFF)
    tail = (scale / RESPONSE_CUTOFF) ** RESPONSE_SHAPE
    drawn = np.ceil(scale / (1.0 - uniforms(m) * (1.0 - tail)) ** (1.0 / RESPONSE_SHAPE))
    response, factor = _scale_to(drawn, target)
    spacings = -np.log1p(-uniforms(m + n))

    # Each connection's exchanges (indices into the drawn arrays, in order) and their estimated
    # times on the connection's RTT class; connection c's final idle gap is spacing m + c.
    offsets = np.r_[0, np.cumsum(epochs)]
    members = [list(range(int(offsets[c]), int(offsets[c + 1]))) for c in range(n)]
    by_class = transfer_estimate(response[None, :], np.asarray(rtts, dtype=np.float64)[:, None] / 1e3, bps, load)
    end = END_FRACTION * seconds

    def busy_of(c: int) -> float:
        return math.fsum(by_class[klass[c], members[c]].tolist())

    busy = np.array([busy_of(c) for c in range(n)])
    start = np.minimum(start, np.maximum(0.0, end - busy))  # open earlier if that makes it fit
    moved = 0
    for c in np.flatnonzero(busy > end).tolist():
        # Too much for the run even from t = 0: its last exchanges move, one by one, to the
        # connection with the most time to spare (the lowest index among equals).
        while busy[c] > end and len(members[c]) > 1:
            e = members[c].pop()
            busy[c] = busy_of(c)
            spare = end - start - busy - by_class[klass, e]
            spare[c] = -np.inf
            d = int(np.argmax(spare))
            if spare[d] < 0:
                raise ValueError(_no_fit(c, members[c] + [e], response, rtts[int(klass[c])], busy[c] + by_class[klass[c], e], bps, seconds))
            members[d].append(e)
            busy[d] = busy_of(d)
            moved += 1
        if busy[c] > end:
            raise ValueError(_no_fit(c, members[c], response, rtts[int(klass[c])], busy[c], bps, seconds))
    think = np.empty(m, dtype=np.float64)
    for c in range(n):
        gaps = spacings[members[c]]
        total = math.fsum(gaps.tolist()) + float(spacings[m + c])
        think[members[c]] = gaps * ((end - start[c] - busy[c]) / total)
    start = np.round(start, 6)
    think = np.round(think, 6)

    # Number the connections in order of opening (ties by draw order).
    order = np.argsort(start, kind="stable").tolist()
    counts = [len(members[c]) for c in order]
    rows = np.fromiter((e for c in order for e in members[c]), dtype=np.int64, count=m)
    frame = pd.DataFrame(
        {
            "connection": np.repeat(np.arange(n, dtype=np.int64), counts),
            "start": np.repeat(start[order], counts),
            "rtt_class": np.repeat(klass[order], counts),
            "request": request[rows],
            "think": think[rows],
            "response": response[rows],
        }
    )
    moves = f"; {moved} exchanges moved from connections too busy to fit" if moved else ""
    frame.attrs["note"] = (
        f"synthetic: startlab.replay.generate(connections={n}, rtts_ms=[{', '.join(_decimal(x) for x in rtts)}], "
        f"rate={_rate_text(bps)}, load={load!r}, duration={_decimal(seconds)}s, seed={seed}); response sizes scaled by "
        f"k={factor:.4f}{moves}. A model of Scharf et al.'s Fig. 16 workload, NOT the traffic traces of their ref. [21] "
        "(WAN-in-Lab tmix vectors), which are not available."
    )
    return frame


def _no_fit(c: int, rows: list[int], response: np.ndarray, rtt_ms: float, busy: float, bps: float, seconds: float) -> str:
    return (
        f"the exchanges do not fit in the run: connection {c}'s {len(rows)} exchanges ({int(response[rows].sum())} response "
        f"bytes, {_decimal(rtt_ms)} ms RTT) need about {busy:.1f} s at {_rate_text(bps)}, more than {END_FRACTION:.0%} of the "
        f"{_decimal(seconds)} s run, and no connection has room for more; lower the load or lengthen the run"
    )


def transfer_estimate(response: Any, rtt_s: Any, bps: float, load: float) -> Any:
    """The generous time (s) :func:`generate` allows an epoch: ``RTT * (2 + log2(1 + response /
    (3 * 1448 B))) + 8 * response / (rate * (1 - load))`` (NumPy arrays or numbers)."""
    import numpy as np

    return rtt_s * (2.0 + np.log2(1.0 + np.asarray(response) / (_IW * _MSS))) + 8.0 * np.asarray(response) / (bps * (1.0 - load))


def _scale_to(drawn: np.ndarray, target: int) -> tuple[np.ndarray, float]:
    """Integer sizes >= 1 proportional to ``drawn`` summing to exactly ``target`` (largest
    remainders), and the factor applied."""
    import numpy as np

    factor = target / math.fsum(drawn.tolist())
    exact = drawn * factor
    sizes = np.maximum(np.floor(exact), 1.0).astype(np.int64)
    short = target - int(sizes.sum())
    if short > 0:
        remainder = exact - np.floor(exact)
        # Largest remainders first; ties by position (a stable sort of the negated remainders).
        take = np.argsort(-remainder, kind="stable")[:short]
        sizes[take] += 1
        short = target - int(sizes.sum())
    while short < 0:  # only when many sizes were raised to 1: take bytes from the largest
        i = int(np.argmax(sizes))
        cut = min(-short, int(sizes[i]) - 1)
        sizes[i] -= cut
        short += cut
    return sizes, factor


def _truncated_pareto_mean(xm: float, a: float, c: float) -> float:
    norm = 1.0 - (xm / c) ** a
    if abs(a - 1.0) < 1e-12:
        return xm * math.log(c / xm) / norm
    return a * xm**a * (xm ** (1.0 - a) - c ** (1.0 - a)) / ((a - 1.0) * norm)


def pareto_scale(mean: float, shape: float, cutoff: float) -> float:
    """The scale x_m of the Pareto law of ``shape`` truncated to [x_m, ``cutoff``] whose mean is
    ``mean`` (the bisection of the simulator's ``pareto_scale``)."""
    if not (0 < mean < cutoff and shape > 0 and math.isfinite(cutoff)):
        raise ValueError(f"no bounded Pareto law with mean {mean}, shape {shape} and cutoff {cutoff}")
    lo, hi = mean * 1e-9, cutoff
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if _truncated_pareto_mean(mid, shape, cutoff) < mean:
            lo = mid
        else:
            hi = mid
    return math.sqrt(lo * hi)


# --- summaries ------------------------------------------------------------------------------------


def summary(frame: pd.DataFrame, *, rate: Rate | None = None, duration: float | str | None = None) -> dict[str, Any]:
    """Counts and totals of a vector frame: connections, epochs, RTT classes used, request and
    response bytes (total, mean, largest), the span of the opening times and, given ``rate`` and
    ``duration``, the offered downlink load ``sum(response) * 8 / (duration * rate)``."""
    out: dict[str, Any] = {
        "connections": int(frame["connection"].nunique()),
        "epochs": len(frame),
        "rtt_classes": sorted(int(k) for k in frame["rtt_class"].unique()),
        "request_bytes": int(frame["request"].sum()),
        "response_bytes": int(frame["response"].sum()),
        "mean_response": float(frame["response"].mean()),
        "max_response": int(frame["response"].max()),
        "first_start": float(frame["start"].min()),
        "last_start": float(frame["start"].max()),
        "note": frame.attrs.get("note"),
    }
    if rate is not None and duration is not None:
        out["offered_load"] = out["response_bytes"] * 8 / (duration_s(duration) * rate_bps(rate))
    return out


def describe(frame: pd.DataFrame, *, rate: Rate | None = None, duration: float | str | None = None) -> str:
    """:func:`summary` as a few lines of text (what ``startlab replay`` prints)."""
    s = summary(frame, rate=rate, duration=duration)
    classes = s["rtt_classes"]
    lines = [
        f"{s['connections']} connections, {s['epochs']} epochs, RTT classes {_classes(classes)}",
        f"requests: {_bytes(s['request_bytes'])} in total",
        f"responses: {_bytes(s['response_bytes'])} in total, mean {_bytes(s['mean_response'])}, largest {_bytes(s['max_response'])}",
        f"connections open from {s['first_start']:.3f} s to {s['last_start']:.3f} s",
    ]
    if rate is not None and duration is not None:
        lines.append(
            f"offered downlink load: {s['offered_load']:.4f} of {_rate_text(rate_bps(rate))} "
            f"over {_decimal(duration_s(duration))} s"
        )
    note = s["note"]
    if note:
        lines.append(str(note))
    else:
        lines.append("no note: not marked as synthetic")
    return "\n".join(lines)


def _classes(classes: list[int]) -> str:
    if classes == list(range(classes[0], classes[-1] + 1)):
        return f"{classes[0]}-{classes[-1]} ({len(classes)})" if len(classes) > 1 else str(classes[0])
    return ", ".join(map(str, classes))


def _bytes(n: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n:.0f} B"


# --- the scenario ---------------------------------------------------------------------------------


def scenario_toml(
    *,
    vectors: str,
    rtts_ms: Sequence[float] = DEFAULT_RTTS_MS,
    rate: Rate = DEFAULT_RATE,
    duration: float | str = 300.0,
    seed: int = 1,
    buffer_pkts: int = DEFAULT_BUFFER_PKTS,
    startup: str | Mapping[str, Any] | None = None,
    access_rate: Rate = "1Gbps",
    name: str = "tmix",
    direction: str = "forward",
    tcp: Mapping[str, Any] | None = None,
) -> str:
    """A scenario (TOML text) that replays the vector file ``vectors`` (a path as the scenario
    will name it: relative to the scenario file's directory, or absolute).

    A dumbbell with one pair per RTT class (``rtts``; ``pairs`` set to their number), bottleneck
    ``rate`` with a drop-tail buffer of ``buffer_pkts`` packets in each direction (Scharf: 10 Mbit/s,
    B = 50 packets), access links of ``access_rate``; the ``[[replay]]`` table (with ``startup`` as an
    algorithm name or a ``{ algorithm = ..., ... }`` table, and ``tcp`` options, both optional); no
    cwnd, sequence or queue traces (450 connections over minutes would make them large).
    """
    rtts = _rtts(rtts_ms)
    if isinstance(buffer_pkts, bool) or not isinstance(buffer_pkts, int) or buffer_pkts < 0:
        raise ValueError(f"buffer_pkts: {buffer_pkts!r}; expected a whole number of packets >= 0")
    if direction not in ("forward", "reverse"):
        raise ValueError(f"direction: {direction!r}; expected 'forward' or 'reverse'")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ValueError(f"seed: {seed!r}; expected a whole number from 0 to 2^64 - 1")
    seconds = duration_s(duration)
    table: dict[str, Any] = {"name": name, "file": str(vectors), "direction": direction}
    if startup is not None:
        table["startup"] = {"algorithm": startup} if isinstance(startup, str) else dict(startup)
    if tcp is not None:
        table["tcp"] = dict(tcp)
    lines = [
        "# Scharf et al., Fig. 16-17: request/response connection vectors replayed over persistent",
        f"# connections on a dumbbell with {len(rtts)} RTT classes (one pair per class).",
        f"# The vectors ({vectors}) come from a file: if `startlab replay generate` wrote it, they are",
        "# SYNTHETIC (see its first line), not the traces of the paper's ref. [21].",
        f'name = {_toml(f"replay-{name}")}',
        f"seed = {seed}",
        f'duration = "{_decimal(seconds)}s"',
        "",
        "[topology]",
        'kind = "dumbbell"',
        f'bottleneck_rate = "{_rate_text(rate_bps(rate))}"',
        f"rtts = [{', '.join(_toml(_decimal(x) + 'ms') for x in rtts)}]",
        f"pairs = {len(rtts)}",
        f'access_rate = "{_rate_text(rate_bps(access_rate))}"',
        f'queue = {{ kind = "droptail", limit = "{buffer_pkts}pkt" }}',
        "",
        "[[replay]]",
        *(f"{key} = {_toml(value)}" for key, value in table.items()),
        "",
        "[trace]",
        "cwnd = false",
        "seq = false",
        "queue = false",
    ]
    return "\n".join(lines) + "\n"


def _toml(value: Any) -> str:
    """A TOML value (strings, booleans, numbers, inline tables and arrays of these)."""
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} cannot be written to a scenario")
        return repr(value)
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {_toml(v)}" for k, v in value.items()) + " }" if value else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise ValueError(f"{value!r} ({type(value).__name__}) cannot be written to a scenario")


def _key(key: Any) -> str:
    import json

    text = str(key)
    return text if re.fullmatch(r"[A-Za-z0-9_-]+", text) else json.dumps(text)


def _rtts(rtts_ms: Sequence[float]) -> list[float]:
    rtts = list(rtts_ms)
    if not rtts:
        raise ValueError("rtts_ms: expected at least one RTT (ms)")
    for x in rtts:
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not (math.isfinite(x) and x > 0):
            raise ValueError(f"rtts_ms: {x!r}; expected positive RTTs in milliseconds")
    return [float(x) for x in rtts]


def _decimal(x: float) -> str:
    """``x`` as a plain decimal (no exponent, no trailing zeros): what scenario units accept."""
    text = format(Decimal(repr(float(x))).normalize(), "f")
    return text


def _rate_text(bps: float) -> str:
    """A rate as scenario text, in the largest unit that writes it exactly."""
    for unit, size in (("Tbps", 10**12), ("Gbps", 10**9), ("Mbps", 10**6), ("Kbps", 10**3)):
        if bps >= size and float(bps).is_integer() and int(bps) % size == 0:
            return f"{int(bps) // size}{unit}"
    return f"{_decimal(bps)}bps"
