//! An emulated network link in userspace: a TCP relay that gives each direction a bandwidth and
//! a propagation delay, for measuring sessions as they run over a real network.
//!
//! Why in userspace: the kernel's shapers (`tc` with the `netem` and `tbf` qdiscs) are missing
//! on many machines and containers, and need privileges where present. The relay models each
//! direction as a link of rate R with one-way delay D = RTT/2: a byte read at time t leaves the
//! sender side when the link is free (serialisation at R, in arrival order) and is written to
//! the other side D later. Between the two sits a bottleneck queue of one bandwidth-delay
//! product (a router's classic buffer size); when it is full the relay stops reading, so the
//! sender feels backpressure as from a real bottleneck, through TCP.
//!
//! It shapes the bytes of the TCP stream (WebSocket framing included, TCP/IP headers not) and
//! adds no loss or jitter: it answers "how fast at this bandwidth and round-trip time", not
//! "how robust on a lossy link".

use std::collections::VecDeque;
use std::fmt;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// A link's bandwidth each way and round-trip time: `1gbit,10ms` (the same rate both ways) or
/// `1gbit/10mbit,40ms` (down, from the server to the client, then up), as home links are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkSpec {
    /// Server to client.
    pub down_bits_per_s: u64,
    /// Client to server.
    pub up_bits_per_s: u64,
    pub rtt: Duration,
}

impl LinkSpec {
    pub fn down_bytes_per_s(&self) -> f64 {
        self.down_bits_per_s as f64 / 8.0
    }

    pub fn up_bytes_per_s(&self) -> f64 {
        self.up_bits_per_s as f64 / 8.0
    }

    /// Bytes in flight on a full pipe from the server: down rate × RTT.
    pub fn bandwidth_delay_bytes(&self) -> f64 {
        self.down_bytes_per_s() * self.rtt.as_secs_f64()
    }
}

/// Why a link specification did not parse.
#[derive(Debug, PartialEq, Eq)]
pub enum LinkSpecError {
    /// Not `RATE,RTT` or `DOWN/UP,RTT`.
    Shape,
    /// The rate is not a positive number with a unit of bit, kbit, mbit or gbit.
    Rate(String),
    /// The round-trip time is not a number with a unit of us, ms or s.
    Rtt(String),
}

impl fmt::Display for LinkSpecError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            LinkSpecError::Shape => write!(f, "expected RATE,RTT or DOWN/UP,RTT, e.g. 1gbit,10ms or 1gbit/10mbit,40ms"),
            LinkSpecError::Rate(r) => write!(f, "{r:?} is not a rate: a positive number with bit, kbit, mbit or gbit, e.g. 100mbit"),
            LinkSpecError::Rtt(r) => write!(f, "{r:?} is not a round-trip time: a number with us, ms or s, e.g. 40ms"),
        }
    }
}

impl std::error::Error for LinkSpecError {}

/// Splits `text` into a number and what follows it (lowercased).
fn number_and_unit(text: &str) -> Option<(f64, String)> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let value: f64 = text[..split].parse().ok()?;
    value.is_finite().then(|| (value, text[split..].trim().to_ascii_lowercase()))
}

impl FromStr for LinkSpec {
    type Err = LinkSpecError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (rates, rtt) = text.split_once(',').ok_or(LinkSpecError::Shape)?;
        let (down, up) = rates.split_once('/').unwrap_or((rates, rates));
        let (down_bits_per_s, up_bits_per_s) = (parse_rate(down)?, parse_rate(up)?);
        let rtt_error = || LinkSpecError::Rtt(rtt.trim().into());
        let (value, unit) = number_and_unit(rtt).ok_or_else(rtt_error)?;
        let seconds = match unit.as_str() {
            "us" => value / 1e6,
            "ms" => value / 1e3,
            "s" => value,
            _ => return Err(rtt_error()),
        };
        if seconds > 60.0 {
            return Err(rtt_error());
        }
        Ok(LinkSpec { down_bits_per_s, up_bits_per_s, rtt: Duration::from_secs_f64(seconds) })
    }
}

/// One rate: a positive number with bit, kbit, mbit or gbit.
fn parse_rate(rate: &str) -> Result<u64, LinkSpecError> {
    let rate_error = || LinkSpecError::Rate(rate.trim().into());
    let (value, unit) = number_and_unit(rate).ok_or_else(rate_error)?;
    let scale = match unit.as_str() {
        "bit" => 1.0,
        "kbit" => 1e3,
        "mbit" => 1e6,
        "gbit" => 1e9,
        _ => return Err(rate_error()),
    };
    let bits_per_s = (value * scale).round();
    // Below 1 kbit/s a single frame takes minutes; above 1 Tbit/s the relay is the limit.
    if !(1e3..=1e12).contains(&bits_per_s) {
        return Err(rate_error());
    }
    Ok(bits_per_s as u64)
}

/// A rate in the largest unit that shows it whole.
fn rate_name(b: u64) -> String {
    if b.is_multiple_of(1_000_000_000) {
        format!("{}gbit", b / 1_000_000_000)
    } else if b.is_multiple_of(1_000_000) {
        format!("{}mbit", b / 1_000_000)
    } else if b.is_multiple_of(1000) {
        format!("{}kbit", b / 1000)
    } else {
        format!("{b}bit")
    }
}

impl fmt::Display for LinkSpec {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let rate = if self.down_bits_per_s == self.up_bits_per_s {
            rate_name(self.down_bits_per_s)
        } else {
            format!("{}/{}", rate_name(self.down_bits_per_s), rate_name(self.up_bits_per_s))
        };
        let us = self.rtt.as_micros();
        if us.is_multiple_of(1000) {
            write!(f, "{rate},{}ms", us / 1000)
        } else {
            write!(f, "{rate},{us}us")
        }
    }
}

/// A relay listening on a local port, forwarding every connection to `upstream` through an
/// emulated link. Stops accepting when dropped; relayed connections end with their peers.
pub struct Relay {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

impl Relay {
    /// Listens on `listen` (port 0 picks a free one) and relays to `upstream`.
    pub fn start(listen: &str, upstream: &str, link: LinkSpec) -> io::Result<Relay> {
        let upstream = upstream
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("{upstream}: no address")))?;
        let listener = TcpListener::bind(listen)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        thread::Builder::new().name("relay-accept".into()).spawn(move || {
            for client in listener.incoming() {
                if stopped.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(client) = client else { continue };
                if let Err(e) = relay_connection(client, upstream, link) {
                    eprintln!("relay: {upstream}: {e}");
                }
            }
        })?;
        Ok(Relay { addr, stop })
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wake the accept loop so that it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

/// Runs one relayed connection: two directions, each a reader and a writer thread.
fn relay_connection(client: TcpStream, upstream: SocketAddr, link: LinkSpec) -> io::Result<()> {
    let server = TcpStream::connect(upstream)?;
    for socket in [&client, &server] {
        // The link adds the delay; Nagle's algorithm would add its own on small frames.
        socket.set_nodelay(true)?;
    }
    let (client_out, server_out) = (client.try_clone()?, server.try_clone()?);
    direction(client, server_out, link.up_bits_per_s, link.rtt)?;
    direction(server, client_out, link.down_bits_per_s, link.rtt)
}

/// Bytes read at once: small enough that serialisation times are fine-grained (64 KiB is
/// 0.5 ms at 1 Gbit/s), large enough to keep the relay's own CPU low.
const READ_BYTES: usize = 64 << 10;

/// One direction of the link: what was read, each piece with the time it may be written.
struct Queue {
    state: Mutex<QueueState>,
    changed: Condvar,
    /// Bytes the queue may hold: one bandwidth-delay product in flight plus one queued.
    capacity: usize,
}

#[derive(Default)]
struct QueueState {
    pieces: VecDeque<(Instant, Vec<u8>)>,
    bytes: usize,
    /// The reader saw the end (or an error): the writer shuts its side down once drained.
    closed: bool,
    /// The writer failed: the reader stops.
    broken: bool,
}

/// Starts one direction of the link, `from` → `to` at `bits_per_s`: a reader and a writer
/// thread sharing a queue.
fn direction(from: TcpStream, to: TcpStream, bits_per_s: u64, rtt: Duration) -> io::Result<()> {
    let bytes_per_s = bits_per_s as f64 / 8.0;
    let capacity = ((2.0 * bytes_per_s * rtt.as_secs_f64()) as usize).max(4 * READ_BYTES);
    let queue = Arc::new(Queue { state: Mutex::new(QueueState::default()), changed: Condvar::new(), capacity });
    let reader_queue = queue.clone();
    thread::Builder::new().name("relay-read".into()).spawn(move || read_side(from, &reader_queue, bytes_per_s, rtt))?;
    thread::Builder::new().name("relay-write".into()).spawn(move || write_side(to, &queue))?;
    Ok(())
}

/// Reads, stamps each piece with its delivery time (serialised at the link's rate after the
/// pieces before it, then one-way delay), and queues it; waits while the queue is full.
fn read_side(mut from: TcpStream, queue: &Queue, bytes_per_s: f64, rtt: Duration) {
    let one_way = rtt / 2;
    let mut link_free = Instant::now();
    loop {
        let mut piece = vec![0u8; READ_BYTES];
        let n = match from.read(&mut piece) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        piece.truncate(n);
        let now = Instant::now();
        let start = link_free.max(now);
        link_free = start + Duration::from_secs_f64(n as f64 / bytes_per_s);
        let mut state = queue.state.lock().unwrap_or_else(|e| e.into_inner());
        while state.bytes + n > queue.capacity && !state.pieces.is_empty() && !state.broken {
            state = queue.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        if state.broken {
            break;
        }
        state.bytes += n;
        state.pieces.push_back((link_free + one_way, piece));
        queue.changed.notify_all();
    }
    let mut state = queue.state.lock().unwrap_or_else(|e| e.into_inner());
    state.closed = true;
    queue.changed.notify_all();
    drop(state);
    let _ = from.shutdown(Shutdown::Read);
}

/// Writes each piece at its delivery time, in order; passes the end on as a half-close.
fn write_side(mut to: TcpStream, queue: &Queue) {
    loop {
        let mut state = queue.state.lock().unwrap_or_else(|e| e.into_inner());
        while state.pieces.is_empty() && !state.closed {
            state = queue.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        let Some((due, piece)) = state.pieces.pop_front() else {
            break;
        };
        drop(state);
        let now = Instant::now();
        if due > now {
            thread::sleep(due - now);
        }
        let written = to.write_all(&piece);
        let mut state = queue.state.lock().unwrap_or_else(|e| e.into_inner());
        state.bytes -= piece.len();
        state.broken = written.is_err();
        queue.changed.notify_all();
        if state.broken {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_specs_parse_and_print_back() {
        for (text, down, up, rtt_us) in [
            ("1gbit,10ms", 1_000_000_000, 1_000_000_000, 10_000),
            ("100mbit,40ms", 100_000_000, 100_000_000, 40_000),
            ("2.5gbit,0.5ms", 2_500_000_000, 2_500_000_000, 500),
            (" 20 mbit , 150 ms ", 20_000_000, 20_000_000, 150_000),
            ("1gbit,0ms", 1_000_000_000, 1_000_000_000, 0),
            ("512kbit,1s", 512_000, 512_000, 1_000_000),
            ("1gbit/10mbit,40ms", 1_000_000_000, 10_000_000, 40_000),
            ("100mbit / 2.5mbit,20ms", 100_000_000, 2_500_000, 20_000),
        ] {
            let link: LinkSpec = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!((link.down_bits_per_s, link.up_bits_per_s, link.rtt.as_micros()), (down, up, rtt_us), "{text}");
            assert_eq!(link.to_string().parse::<LinkSpec>().unwrap(), link, "{text} printed as {link}");
        }
        assert_eq!("1gbit,100ms".parse::<LinkSpec>().unwrap().bandwidth_delay_bytes(), 12.5e6);
    }

    #[test]
    fn malformed_link_specs_are_refused_with_what_is_wrong() {
        assert_eq!("1gbit".parse::<LinkSpec>(), Err(LinkSpecError::Shape));
        assert_eq!("fast,10ms".parse::<LinkSpec>(), Err(LinkSpecError::Rate("fast".into())));
        assert_eq!("1gbps,10ms".parse::<LinkSpec>(), Err(LinkSpecError::Rate("1gbps".into())));
        assert_eq!("0mbit,10ms".parse::<LinkSpec>(), Err(LinkSpecError::Rate("0mbit".into())));
        assert_eq!("-1mbit,10ms".parse::<LinkSpec>(), Err(LinkSpecError::Rate("-1mbit".into())));
        assert_eq!("1gbit,10".parse::<LinkSpec>(), Err(LinkSpecError::Rtt("10".into())));
        assert_eq!("1gbit,2min".parse::<LinkSpec>(), Err(LinkSpecError::Rtt("2min".into())));
        assert_eq!("1gbit,61s".parse::<LinkSpec>(), Err(LinkSpecError::Rtt("61s".into())));
        assert_eq!("1gbit/,10ms".parse::<LinkSpec>(), Err(LinkSpecError::Rate("".into())));
        assert_eq!("1gbit/fast,10ms".parse::<LinkSpec>(), Err(LinkSpecError::Rate("fast".into())));
        assert_eq!("1gbit/1mbit/1kbit,10ms".parse::<LinkSpec>(), Err(LinkSpecError::Rate("1mbit/1kbit".into())));
        assert!(LinkSpecError::Shape.to_string().contains("DOWN/UP,RTT"));
    }

    /// An echo server behind the relay: a byte's round trip takes at least the RTT, a bulk
    /// transfer at most the link's rate, and every byte comes back in order.
    #[test]
    fn the_relay_delays_by_the_rtt_and_limits_the_rate() {
        let echo = TcpListener::bind("127.0.0.1:0").unwrap();
        let echo_addr = echo.local_addr().unwrap().to_string();
        thread::spawn(move || {
            let (mut socket, _) = echo.accept().unwrap();
            let mut out = socket.try_clone().unwrap();
            let _ = io::copy(&mut socket, &mut out);
        });
        let link: LinkSpec = "40mbit,40ms".parse().unwrap();
        let relay = Relay::start("127.0.0.1:0", &echo_addr, link).unwrap();
        let mut socket = TcpStream::connect(relay.addr).unwrap();
        socket.set_read_timeout(Some(Duration::from_secs(60))).unwrap();

        let start = Instant::now();
        socket.write_all(b"x").unwrap();
        let mut one = [0u8; 1];
        socket.read_exact(&mut one).unwrap();
        assert!(start.elapsed() >= link.rtt, "a round trip took {:?}", start.elapsed());

        // 1 MB each way at 40 Mbit/s takes at least 0.2 s of serialisation.
        let bulk: Vec<u8> = (0..1_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let start = Instant::now();
        let mut writer = socket.try_clone().unwrap();
        let sent = bulk.clone();
        let sender = thread::spawn(move || writer.write_all(&sent).unwrap());
        let mut back = vec![0u8; bulk.len()];
        socket.read_exact(&mut back).unwrap();
        sender.join().unwrap();
        let floor = Duration::from_secs_f64(bulk.len() as f64 / link.down_bytes_per_s());
        assert!(start.elapsed() >= floor, "1 MB echoed in {:?}, under the link's {floor:?}", start.elapsed());
        assert!(back == bulk, "the bytes came back changed or out of order");

        // A half-close passes through: the echo server sees the end and closes; so do we.
        socket.shutdown(Shutdown::Write).unwrap();
        assert_eq!(socket.read(&mut one).unwrap(), 0);
    }

    /// Each way has its own rate: 200 kB takes at least 0.4 s over 4 Mbit/s whichever way it
    /// goes, whatever the other way's rate.
    #[test]
    fn down_and_up_have_their_own_rates() {
        const BYTES: usize = 200_000;
        // The server side: reads BYTES (an upload) or one byte (a request for a download), then
        // answers one byte or BYTES.
        let server = TcpListener::bind("127.0.0.1:0").unwrap();
        let server_addr = server.local_addr().unwrap().to_string();
        thread::spawn(move || {
            for socket in server.incoming() {
                let mut socket = socket.unwrap();
                let mut kind = [0u8; 1];
                socket.read_exact(&mut kind).unwrap();
                if kind[0] == b'u' {
                    let mut upload = vec![0u8; BYTES];
                    socket.read_exact(&mut upload).unwrap();
                    socket.write_all(b"k").unwrap();
                } else {
                    socket.write_all(&vec![7u8; BYTES]).unwrap();
                }
            }
        });
        let floor = Duration::from_secs_f64(BYTES as f64 * 8.0 / 4e6);
        for (link, kind) in [("80mbit/4mbit,2ms", b'u'), ("4mbit/80mbit,2ms", b'd')] {
            let relay = Relay::start("127.0.0.1:0", &server_addr, link.parse().unwrap()).unwrap();
            let mut socket = TcpStream::connect(relay.addr).unwrap();
            socket.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
            let start = Instant::now();
            socket.write_all(&[kind]).unwrap();
            if kind == b'u' {
                socket.write_all(&vec![9u8; BYTES]).unwrap();
                let mut ack = [0u8; 1];
                socket.read_exact(&mut ack).unwrap();
            } else {
                let mut download = vec![0u8; BYTES];
                socket.read_exact(&mut download).unwrap();
            }
            assert!(start.elapsed() >= floor, "{link}: 200 kB moved in {:?}, under 4 Mbit/s's {floor:?}", start.elapsed());
        }
    }
}
