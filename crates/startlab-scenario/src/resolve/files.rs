//! Files a scenario names: connection vectors (CSV, or Parquet through the Python package's
//! reader) and empirical CDF tables.

use super::*;

/// Reads connection vectors from a Parquet file: registered by the Python package (which reads
/// Parquet with pyarrow) and returning the file as CSV text of the same columns.
pub type TableReader = fn(&std::path::Path) -> Result<String, String>;

pub(super) static PARQUET_READER: std::sync::OnceLock<TableReader> = std::sync::OnceLock::new();

/// Lets `[[replay]] file = "....parquet"` be read (the Python bindings register pyarrow's reader).
pub fn set_parquet_reader(reader: TableReader) {
    let _ = PARQUET_READER.set(reader);
}

/// Where a file named in a scenario is: relative to the scenario's directory when there is one,
/// else to the working directory.
pub(crate) fn scenario_path(base: Option<&std::path::Path>, file: &str) -> std::path::PathBuf {
    base.map_or_else(|| std::path::PathBuf::from(file), |b| b.join(file))
}

/// Reads and parses a text file named at key `at` of a scenario: the one reader for every such
/// file (size and think CDFs, link traces, connection vectors), so every failure has one form —
/// `at: cannot read PATH: why` or `at: PATH: what is wrong (line n)`.
pub(crate) fn read_named<T>(at: &str, base: Option<&std::path::Path>, file: &str, parse: impl FnOnce(&str) -> Result<T, String>) -> Result<T, ScenarioError> {
    let path = scenario_path(base, file);
    let text = std::fs::read_to_string(&path).map_err(|e| ScenarioError::new(at, format!("cannot read {}: {e}", path.display())))?;
    parse(&text).map_err(|m| ScenarioError::new(at, format!("{}: {m}", path.display())))
}

/// [`read_named`] for a connection-vector table: a `.csv` file, or a `.parquet` file through the reader
/// the Python package registers ([`set_parquet_reader`]), read as CSV text of the same columns.
pub(crate) fn read_named_table<T>(at: &str, base: Option<&std::path::Path>, file: &str, parse: impl FnOnce(&str) -> Result<T, String>) -> Result<T, ScenarioError> {
    let path = scenario_path(base, file);
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("csv") => read_named(at, base, file, parse),
        Some("parquet") => match PARQUET_READER.get() {
            Some(read) => {
                let text = read(&path).map_err(|m| ScenarioError::new(at, format!("{}: {m}", path.display())))?;
                parse(&text).map_err(|m| ScenarioError::new(at, format!("{}: {m}", path.display())))
            }
            None => Err(ScenarioError::new(at, format!("{}: Parquet vector files are read through the Python package (startlab.replay); give a .csv file here", path.display()))),
        },
        _ => Err(ScenarioError::new(at, format!("{file:?} is not a vector file; expected a .csv or .parquet file (docs/REPLAY.md)"))),
    }
}

/// The columns of a connection-vector file, in order (docs/REPLAY.md).
pub const VECTOR_COLUMNS: [&str; 6] = ["connection", "start", "rtt_class", "request", "think", "response"];

/// Parses a connection-vector CSV text: a header line of [`VECTOR_COLUMNS`], then one epoch per
/// line; blank and `#` lines skipped. Errors name the line.
pub fn parse_vectors(text: &str) -> Result<Vec<VectorConnection>, String> {
    let mut out: Vec<VectorConnection> = Vec::new();
    let mut header = false;
    let mut seen = std::collections::BTreeSet::new();
    for (n, line) in text.lines().enumerate() {
        let at = n + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if !header {
            for (k, want) in VECTOR_COLUMNS.iter().enumerate() {
                match cells.get(k) {
                    Some(c) if c == want => {}
                    Some(c) => return Err(format!("line {at}: column {} is {c:?}; expected the header {}", k + 1, VECTOR_COLUMNS.join(","))),
                    None => return Err(format!("line {at}: the header lacks column {want:?}; expected {}", VECTOR_COLUMNS.join(","))),
                }
            }
            if cells.len() > VECTOR_COLUMNS.len() {
                return Err(format!("line {at}: {} columns; expected the {} of {}", cells.len(), VECTOR_COLUMNS.len(), VECTOR_COLUMNS.join(",")));
            }
            header = true;
            continue;
        }
        if cells.len() != VECTOR_COLUMNS.len() {
            return Err(format!("line {at}: {} fields; expected {} ({})", cells.len(), VECTOR_COLUMNS.len(), VECTOR_COLUMNS.join(",")));
        }
        let whole = |k: usize, min: u64| -> Result<u64, String> {
            match cells[k].parse::<u64>() {
                Ok(v) if v >= min => Ok(v),
                _ => Err(format!("line {at}: {} = {:?} is not valid; expected a whole number of at least {min}", VECTOR_COLUMNS[k], cells[k])),
            }
        };
        let secs = |k: usize| -> Result<Dur, String> {
            match cells[k].parse::<f64>() {
                Ok(v) if v.is_finite() && (0.0..=1e6).contains(&v) => Ok(Dur((v * 1e9).round() as u64)),
                _ => Err(format!("line {at}: {} = {:?} is not valid; expected seconds from 0 to 1e6", VECTOR_COLUMNS[k], cells[k])),
            }
        };
        let id = whole(0, 0)?;
        let (start, class) = (secs(1)?, whole(2, 0)? as usize);
        let epoch = (whole(3, 1)?, secs(4)?, whole(5, 1)?);
        match out.last_mut() {
            Some(c) if c.id == id => {
                if c.start != start || c.rtt_class != class {
                    return Err(format!("line {at}: connection {id} has start {start} and rtt_class {class} here but {} and {} on its first line; they must agree", c.start, c.rtt_class));
                }
                c.epochs.push(epoch);
            }
            _ => {
                if !seen.insert(id) {
                    return Err(format!("line {at}: connection {id} appeared before; the lines of a connection must be contiguous"));
                }
                out.push(VectorConnection { id, start, rtt_class: class, line: at, epochs: vec![epoch] });
            }
        }
    }
    if !header {
        return Err(format!("has no header; expected {}", VECTOR_COLUMNS.join(",")));
    }
    if out.is_empty() {
        return Err("has no epochs".into());
    }
    Ok(out)
}

/// What the first column of an empirical CDF file holds.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum CdfUnit {
    /// Whole bytes.
    Bytes,
    /// Seconds (a decimal number), kept as nanoseconds.
    Seconds,
}

/// An empirical CDF file: one `bytes,probability` point per line (blank lines and `#` comments
/// skipped), bytes a whole number, both non-decreasing, probabilities in [0, 1] and the last 1.
pub(super) fn parse_cdf(text: &str, unit: CdfUnit) -> Result<Vec<(u64, f64)>, String> {
    let (what, example) = match unit {
        CdfUnit::Bytes => ("bytes", "1500,0.25"),
        CdfUnit::Seconds => ("seconds", "0.5,0.25"),
    };
    let mut points: Vec<(u64, f64)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = n + 1;
        let (b, q) = line.split_once(',').ok_or_else(|| format!("line {at}: {line:?} is not a point; expected \"{what},probability\" such as \"{example}\""))?;
        let bytes: u64 = match unit {
            CdfUnit::Bytes => b.trim().parse().map_err(|_| format!("line {at}: {:?} is not a whole number of bytes", b.trim()))?,
            CdfUnit::Seconds => match b.trim().parse::<f64>() {
                Ok(x) if x.is_finite() && (0.0..=1e6).contains(&x) => (x * 1e9).round() as u64,
                _ => return Err(format!("line {at}: {:?} is not a number of seconds (0 to 1e6)", b.trim())),
            },
        };
        let p: f64 = q.trim().parse().map_err(|_| format!("line {at}: {:?} is not a probability", q.trim()))?;
        if !(0.0..=1.0).contains(&p) {
            return Err(format!("line {at}: probability {p} is outside 0 to 1"));
        }
        if let Some(&(pb, pp)) = points.last() {
            if bytes < pb || p < pp {
                let show = |v: u64| if unit == CdfUnit::Seconds { format!("{}", v as f64 / 1e9) } else { v.to_string() };
                return Err(format!("line {at}: ({}, {p}) goes back from ({}, {pp}); {what} and probabilities must not decrease (a CDF is monotone)", show(bytes), show(pb)));
            }
        }
        points.push((bytes, p));
    }
    match points.last() {
        None => Err(format!("has no points; expected \"{what},probability\" lines")),
        Some(&(_, p)) if p != 1.0 => Err(format!("its last probability is {p}; a CDF must end at 1")),
        Some(&(0, _)) if unit == CdfUnit::Bytes => Err("its largest size is 0 bytes; sizes must reach at least 1".into()),
        Some(_) => Ok(points),
    }
}
