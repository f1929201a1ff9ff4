//! Reading a capture file, one frame at a time: pcap (micro- or nanosecond magic, either byte
//! order) and pcapng (every section and interface), through the `pcap-file` crate.
//!
//! The reader streams: `pcap-file` keeps one 8 MB buffer and a frame is handed to the caller as a
//! borrowed slice, so memory does not grow with the file. A file that ends inside a record or holds
//! a record that cannot be read stops the reading with a [`CaptureError`] naming the packet
//! number (1-based, as Wireshark numbers frames); the frames before it have been handed over.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use pcap_file::pcap::PcapReader;
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
use pcap_file::pcapng::{Block, PcapNgReader};
use pcap_file::{DataLink, PcapError, TsResolution};

/// The link layer of a frame, as the capture's link type (LINKTYPE_* number) says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link {
    /// LINKTYPE_ETHERNET (1).
    Ethernet,
    /// LINKTYPE_RAW (101): an IPv4 or IPv6 packet, told apart by its version nibble.
    Raw,
    /// LINKTYPE_IPV4 (228).
    Ipv4,
    /// LINKTYPE_IPV6 (229).
    Ipv6,
    /// LINKTYPE_LINUX_SLL (113): Linux "cooked" capture, a 16-byte header (tcpdump -i any).
    Sll,
    /// LINKTYPE_LINUX_SLL2 (276): Linux cooked capture v2, a 20-byte header.
    Sll2,
    /// Any other link type (its number): its frames are counted and skipped.
    Other(u32),
    /// A pcapng simple packet block: no timestamp and no interface, so it is counted and skipped.
    Untimed,
}

impl Link {
    fn from_datalink(d: DataLink) -> Link {
        match d {
            DataLink::ETHERNET => Link::Ethernet,
            DataLink::RAW => Link::Raw,
            DataLink::IPV4 => Link::Ipv4,
            DataLink::IPV6 => Link::Ipv6,
            DataLink::LINUX_SLL => Link::Sll,
            DataLink::LINUX_SLL2 => Link::Sll2,
            other => Link::Other(u32::from(other)),
        }
    }

    /// The link type's name, for the report.
    pub fn name(self) -> String {
        match self {
            Link::Ethernet => "ethernet".into(),
            Link::Raw => "raw-ip".into(),
            Link::Ipv4 => "ipv4".into(),
            Link::Ipv6 => "ipv6".into(),
            Link::Sll => "linux-sll".into(),
            Link::Sll2 => "linux-sll2".into(),
            Link::Other(n) => format!("linktype-{n}"),
            Link::Untimed => "simple-packet-block".into(),
        }
    }
}

/// One captured frame.
#[derive(Debug)]
pub struct Frame<'a> {
    /// Frame number in the file, from 1 (pcapng: packet blocks only).
    pub number: u64,
    /// Capture time, nanoseconds since the Unix epoch (as the file records it).
    pub time_ns: u64,
    /// The frame's link layer.
    pub link: Link,
    /// The captured bytes (at most the snapshot length).
    pub data: &'a [u8],
    /// The frame's length on the wire, bytes.
    pub orig_len: u32,
}

/// The file's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// libpcap's format.
    Pcap,
    /// pcapng.
    PcapNg,
}

impl Format {
    /// `"pcap"` or `"pcapng"`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Pcap => "pcap",
            Format::PcapNg => "pcapng",
        }
    }
}

/// Why reading stopped before the end of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureError {
    /// The packet (1-based) that could not be read; 0 for the file header.
    pub packet: u64,
    /// What was wrong, in words.
    pub message: String,
}

impl std::fmt::Display for CaptureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.packet == 0 {
            write!(f, "{}", self.message)
        } else {
            write!(f, "packet {}: {}", self.packet, self.message)
        }
    }
}

const PCAPNG_MAGIC: [u8; 4] = [0x0A, 0x0D, 0x0D, 0x0A];
const PCAP_MAGICS: [[u8; 4]; 4] = [
    [0xD4, 0xC3, 0xB2, 0xA1],
    [0xA1, 0xB2, 0xC3, 0xD4],
    [0x4D, 0x3C, 0xB2, 0xA1],
    [0xA1, 0xB2, 0x3C, 0x4D],
];

/// Which format the file is, from its first four bytes.
pub fn sniff(path: &Path) -> Result<Format, CaptureError> {
    let mut f = open(path)?;
    let mut magic = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match f.read(&mut magic[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) => return Err(header_error(format!("cannot read {}: {e}", path.display()))),
        }
    }
    if got < 4 {
        return Err(header_error(format!("{} is not a capture: {got} bytes, too short for a pcap or pcapng header", path.display())));
    }
    if magic == PCAPNG_MAGIC {
        Ok(Format::PcapNg)
    } else if PCAP_MAGICS.contains(&magic) {
        Ok(Format::Pcap)
    } else {
        Err(header_error(format!(
            "{} is not a pcap or pcapng file: it starts with {:02x} {:02x} {:02x} {:02x}",
            path.display(),
            magic[0],
            magic[1],
            magic[2],
            magic[3]
        )))
    }
}

fn header_error(message: String) -> CaptureError {
    CaptureError { packet: 0, message }
}

fn open(path: &Path) -> Result<File, CaptureError> {
    File::open(path).map_err(|e| header_error(format!("cannot open {}: {e}", path.display())))
}

fn record_error(packet: u64, e: PcapError) -> CaptureError {
    let message = match e {
        PcapError::IoError(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            "the file ends inside this packet's record (a truncated capture, or a corrupt length field)".to_string()
        }
        PcapError::IoError(io) => format!("cannot read the record: {io}"),
        PcapError::IncompleteBuffer => "the file ends inside this packet's record (a truncated capture)".to_string(),
        PcapError::InvalidField(what) => format!("a corrupt record ({what})"),
        PcapError::InvalidInterfaceId(id) => format!("a corrupt record (it names interface {id}, which no interface block describes)"),
        other => format!("a corrupt record ({other})"),
    };
    CaptureError { packet, message }
}

/// Reads every frame of the capture at `path` in file order and hands each to `on_frame`.
/// Returns the file's format; an `Err` after some frames means the file could not be read beyond
/// the packet it names.
pub fn read(path: &Path, mut on_frame: impl FnMut(&Frame<'_>)) -> (Option<Format>, Result<(), CaptureError>) {
    let format = match sniff(path) {
        Ok(f) => f,
        Err(e) => return (None, Err(e)),
    };
    let file = match open(path).and_then(|mut f| {
        f.seek(SeekFrom::Start(0)).map_err(|e| header_error(format!("cannot read {}: {e}", path.display())))?;
        Ok(f)
    }) {
        Ok(f) => f,
        Err(e) => return (Some(format), Err(e)),
    };
    let result = match format {
        Format::Pcap => read_pcap(file, &mut on_frame),
        Format::PcapNg => read_pcapng(file, &mut on_frame),
    };
    (Some(format), result)
}

fn read_pcap(file: File, on_frame: &mut impl FnMut(&Frame<'_>)) -> Result<(), CaptureError> {
    let mut reader = PcapReader::new(file).map_err(|e| header_error(format!("the pcap file header cannot be read: {e}")))?;
    let header = reader.header();
    let link = Link::from_datalink(header.datalink);
    let (frac_limit, frac_ns) = match header.ts_resolution {
        TsResolution::MicroSecond => (1_000_000u32, 1000u64),
        TsResolution::NanoSecond => (1_000_000_000, 1),
    };
    let mut number = 0u64;
    // Raw records: pcap-file's checked packets refuse a wire length above the snapshot length,
    // which is what every capture taken with a short snaplen (tcpdump -s 96) holds.
    while let Some(packet) = reader.next_raw_packet() {
        number += 1;
        let packet = packet.map_err(|e| record_error(number, e))?;
        if packet.ts_frac >= frac_limit {
            return Err(CaptureError { packet: number, message: format!("a corrupt record (its timestamp's fraction {} is not below {frac_limit})", packet.ts_frac) });
        }
        let time_ns = u64::from(packet.ts_sec) * 1_000_000_000 + u64::from(packet.ts_frac) * frac_ns;
        on_frame(&Frame { number, time_ns, link, data: &packet.data, orig_len: packet.orig_len.max(packet.incl_len) });
    }
    Ok(())
}

/// Nanoseconds of `units` timestamp units of an interface whose `if_tsresol` is `resol`
/// (pcapng §4.2: high bit clear, 10^-n s; set, 2^-n s; absent, microseconds).
fn units_to_ns(units: u64, resol: u8) -> u64 {
    let units = u128::from(units);
    let ns = if resol & 0x80 == 0 {
        let n = u32::from(resol);
        if n <= 9 {
            units * 10u128.pow(9 - n)
        } else {
            units / 10u128.pow((n - 9).min(38))
        }
    } else {
        let n = u32::from(resol & 0x7F).min(127);
        (units * 1_000_000_000) >> n
    };
    u64::try_from(ns).unwrap_or(u64::MAX)
}

fn read_pcapng(file: File, on_frame: &mut impl FnMut(&Frame<'_>)) -> Result<(), CaptureError> {
    let mut reader = PcapNgReader::new(file).map_err(|e| header_error(format!("the pcapng section header cannot be read: {e}")))?;
    let mut number = 0u64;
    loop {
        let interfaces: Vec<(Link, u8)> = reader
            .interfaces()
            .iter()
            .map(|i| {
                let resol = i.options.iter().find_map(|o| match o {
                    InterfaceDescriptionOption::IfTsResol(r) => Some(*r),
                    _ => None,
                });
                (Link::from_datalink(i.linktype), resol.unwrap_or(6))
            })
            .collect();
        let Some(block) = reader.next_block() else { return Ok(()) };
        let block = match block {
            Ok(b) => b,
            Err(e) => return Err(record_error(number + 1, e)),
        };
        match block {
            Block::EnhancedPacket(p) => {
                number += 1;
                let Some(&(link, resol)) = interfaces.get(p.interface_id as usize) else {
                    return Err(record_error(number, PcapError::InvalidInterfaceId(p.interface_id)));
                };
                // pcap-file reads the 64-bit timestamp as nanoseconds whatever the resolution:
                // take its units back and scale them by the interface's if_tsresol.
                let units = u64::try_from(p.timestamp.as_nanos()).unwrap_or(u64::MAX);
                on_frame(&Frame { number, time_ns: units_to_ns(units, resol), link, data: &p.data, orig_len: p.original_len });
            }
            Block::SimplePacket(p) => {
                // No timestamp: such a frame cannot be placed in time.
                number += 1;
                on_frame(&Frame { number, time_ns: 0, link: Link::Untimed, data: &p.data, orig_len: p.original_len });
            }
            Block::Packet(p) => {
                number += 1;
                let Some(&(link, resol)) = interfaces.get(usize::from(p.interface_id)) else {
                    return Err(record_error(number, PcapError::InvalidInterfaceId(u32::from(p.interface_id))));
                };
                let units = p.timestamp;
                on_frame(&Frame { number, time_ns: units_to_ns(units, resol), link, data: &p.data, orig_len: p.original_len });
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcapng_resolutions_scale_to_nanoseconds() {
        assert_eq!(units_to_ns(1_500_000, 6), 1_500_000_000, "microseconds by default");
        assert_eq!(units_to_ns(7, 9), 7);
        assert_eq!(units_to_ns(1 << 20, 0x80 | 20), 1_000_000_000, "2^-20 s units");
        assert_eq!(units_to_ns(5_000, 12), 5, "picoseconds round down to nanoseconds");
    }
}
