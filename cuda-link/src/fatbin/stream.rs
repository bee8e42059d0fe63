//! A fatbin entry's payload decoded as a stream, for readers that need
//! the text once and not whole: inspecting a gigabyte of compressed PTX
//! holds a window, not the gigabyte.
//!
//! zstd streams through ruzstd. LZ4 entries are one raw LZ4 block, which
//! lz4_flex (and every crate we know of) decodes only into a buffer of the
//! whole output, so [`Lz4BlockReader`] decodes one here, with lz4_flex's
//! rules, keeping the 64 KiB that a match can reach back.

use std::io::{self, Read};

use super::{Compression, Entry};
use crate::error::ParseResult;

/// How far back an LZ4 match reaches: its offset is a `u16`.
const WINDOW: usize = 1 << 16;

/// The payload of one entry, decoded as it is read: exactly its declared
/// size, or an error.
pub(crate) struct EntryReader<'a> {
    decoder: Decoder<'a>,
    expected: u64,
    produced: u64,
}

enum Decoder<'a> {
    Plain(&'a [u8]),
    Lz4(Lz4BlockReader<'a>),
    Zstd(Box<ruzstd::decoding::StreamingDecoder<&'a [u8], ruzstd::decoding::FrameDecoder>>),
}

impl<'a> Entry<'a> {
    /// The payload as [`decompress_exact`](Entry::decompress_exact) gives
    /// it, as a stream: the same checks before decoding, and an error from
    /// the reader where that would fail while decoding.
    pub(crate) fn reader(&self) -> ParseResult<EntryReader<'a>> {
        let Some(input) = self.compressed_input()? else {
            return Ok(EntryReader {
                decoder: Decoder::Plain(self.payload),
                expected: self.payload.len() as u64,
                produced: 0,
            });
        };
        let expected = self.uncompressed_size;
        let decoder = match self.compression {
            Compression::Lz4 => Decoder::Lz4(Lz4BlockReader::new(input, expected)),
            Compression::Zstd => Decoder::Zstd(Box::new(
                ruzstd::decoding::StreamingDecoder::new(input)
                    .map_err(|e| self.decompress_error(e.to_string()))?,
            )),
            Compression::None => unreachable!("handled by compressed_input"),
        };
        Ok(EntryReader {
            decoder,
            expected,
            produced: 0,
        })
    }
}

impl Read for EntryReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // One byte past the declared size, to notice a payload that
        // decodes too long.
        let room = (self.expected - self.produced.min(self.expected)).saturating_add(1);
        let len = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let buf = &mut buf[..len];
        let read = match &mut self.decoder {
            Decoder::Plain(rest) => rest.read(buf)?,
            Decoder::Lz4(lz4) => lz4.read(buf)?,
            Decoder::Zstd(zstd) => zstd.read(buf)?,
        };
        self.produced += read as u64;
        let short = self.produced < self.expected;
        if self.produced > self.expected || (read == 0 && !buf.is_empty() && short) {
            return Err(io::Error::other(format!(
                "decoded {}{} bytes, header says {}",
                self.produced,
                if self.produced > self.expected {
                    " or more"
                } else {
                    ""
                },
                self.expected
            )));
        }
        Ok(read)
    }
}

/// What the block decoder does next.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// Read a sequence's token and literal length.
    Token,
    /// Copy literals, then read the match.
    Literal {
        token: u8,
        left: usize,
    },
    /// Copy a match from the window; `done` bytes of it are copied.
    Match {
        offset: usize,
        left: usize,
        done: usize,
    },
    End,
}

/// One raw LZ4 block, decoded into at most `capacity` bytes with
/// lz4_flex's rules (`lz4_flex::block::decompress`), as a stream: the
/// same bytes where it succeeds, an error where it fails.
pub(crate) struct Lz4BlockReader<'a> {
    input: &'a [u8],
    at: usize,
    capacity: u64,
    produced: u64,
    /// The last bytes produced: at least [`WINDOW`] once there are so many.
    history: Vec<u8>,
    step: Step,
}

impl<'a> Lz4BlockReader<'a> {
    pub(crate) fn new(input: &'a [u8], capacity: u64) -> Self {
        Lz4BlockReader {
            input,
            at: 0,
            capacity,
            produced: 0,
            history: Vec::new(),
            step: Step::Token,
        }
    }

    fn byte(&mut self) -> io::Result<u8> {
        let byte = *self
            .input
            .get(self.at)
            .ok_or_else(|| corrupt("expected another byte, found none"))?;
        self.at += 1;
        Ok(byte)
    }

    /// A length's continuation: bytes summed up to one that is not 255.
    fn integer(&mut self) -> io::Result<usize> {
        let mut sum = 0usize;
        loop {
            let byte = self.byte()?;
            sum = sum.saturating_add(usize::from(byte));
            if byte != 0xFF {
                return Ok(sum);
            }
        }
    }

    fn room(&self) -> u64 {
        self.capacity - self.produced
    }

    /// Starts a sequence: its token and literal length, checked against
    /// the input and the capacity.
    fn start_sequence(&mut self) -> io::Result<Step> {
        let token = self.byte()?;
        let mut literals = usize::from(token >> 4);
        if literals == 15 {
            literals = literals.saturating_add(self.integer()?);
        }
        if literals > self.input.len() - self.at {
            return Err(corrupt("literals run past the input"));
        }
        if literals as u64 > self.room() {
            return Err(corrupt("literals run past the declared size"));
        }
        Ok(Step::Literal {
            token,
            left: literals,
        })
    }

    /// After a sequence's literals: the end of the block, or its match.
    fn start_match(&mut self, token: u8) -> io::Result<Step> {
        if self.at >= self.input.len() {
            return Ok(Step::End);
        }
        let offset = usize::from(u16::from_le_bytes([self.byte()?, self.byte()?]));
        if offset == 0 {
            return Err(corrupt("a match offset is 0"));
        }
        let mut length = 4 + usize::from(token & 0xF);
        if length == 19 {
            length = length.saturating_add(self.integer()?);
        }
        if length as u64 > self.room() {
            return Err(corrupt("a match runs past the declared size"));
        }
        if offset as u64 > self.produced {
            return Err(corrupt("a match reaches before the start"));
        }
        Ok(Step::Match {
            offset,
            left: length,
            done: 0,
        })
    }

    /// Adds bytes just produced to the window, which keeps its last
    /// [`WINDOW`] bytes (trimmed in steps, to move memory rarely).
    fn produce(&mut self, out: &mut [u8], from_history: Option<usize>) {
        match from_history {
            Some(start) => self.history.extend_from_within(start..start + out.len()),
            None => self.history.extend_from_slice(out),
        }
        if from_history.is_some() {
            out.copy_from_slice(&self.history[self.history.len() - out.len()..]);
        }
        self.produced += out.len() as u64;
        if self.history.len() >= 4 * WINDOW {
            self.history.drain(..self.history.len() - WINDOW);
        }
    }
}

impl Read for Lz4BlockReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut written = 0;
        while written < buf.len() {
            self.step = match self.step {
                Step::End => break,
                Step::Token => self.start_sequence()?,
                Step::Literal { token, left } => {
                    let n = left.min(buf.len() - written);
                    let out = &mut buf[written..written + n];
                    out.copy_from_slice(&self.input[self.at..self.at + n]);
                    self.at += n;
                    written += n;
                    self.produce(out, None);
                    match left - n {
                        0 => self.start_match(token)?,
                        left => Step::Literal { token, left },
                    }
                }
                Step::Match { offset, left, done } => {
                    // The last `offset + done` bytes repeat with period
                    // `offset`, so any whole number of periods among them
                    // is a source that is all in the window: a run of one
                    // byte (offset 1) is copied in doubling steps, not a
                    // byte at a time.
                    let reach = (offset + done).min(self.history.len());
                    let period = reach - reach % offset;
                    let n = left.min(buf.len() - written).min(period);
                    let start = self.history.len() - period;
                    self.produce(&mut buf[written..written + n], Some(start));
                    written += n;
                    match left - n {
                        0 => Step::Token,
                        left => Step::Match {
                            offset,
                            left,
                            done: done + n,
                        },
                    }
                }
            };
        }
        Ok(written)
    }
}

fn corrupt(detail: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, detail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Reads everything in reads of `step` bytes.
    fn read_all(mut reader: impl Read, step: usize) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut buf = vec![0; step];
        loop {
            match reader.read(&mut buf)? {
                0 => return Ok(out),
                n => out.extend_from_slice(&buf[..n]),
            }
        }
    }

    /// Text with long repeats, far-back matches and overlapping runs.
    fn sample(len: usize) -> Vec<u8> {
        let mut data = Vec::with_capacity(len);
        let mut x = 12345u32;
        while data.len() < len {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            match x >> 29 {
                0 => data.extend(std::iter::repeat_n(b'a', (x % 300) as usize)),
                1 if data.len() > 70_000 => {
                    let from = data.len() - 65_000;
                    data.extend_from_within(from..from + 500);
                }
                _ => data.extend_from_slice(format!(".reg .b32 r{};\n", x % 97).as_bytes()),
            }
        }
        data.truncate(len);
        data
    }

    #[test]
    fn decodes_as_lz4_flex_does() {
        let data = sample(400_000);
        let block = lz4_flex::block::compress(&data);
        for step in [1, 7, 4096, 1 << 20] {
            let out = read_all(Lz4BlockReader::new(&block, data.len() as u64), step).unwrap();
            assert!(out == data, "read size {step}");
        }
        // Too small a capacity is an error, as in lz4_flex.
        assert!(read_all(Lz4BlockReader::new(&block, data.len() as u64 - 1), 4096).is_err());
    }

    proptest! {
        /// Any bytes, any capacity, any read size: the same output as
        /// lz4_flex where it succeeds, an error where it fails.
        #[test]
        fn any_block_decodes_as_lz4_flex(
            seed in proptest::collection::vec(any::<u8>(), 0..3000),
            flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..4),
            compress in any::<bool>(),
            slack in 0usize..40,
            step in 1usize..5000,
        ) {
            let mut block = if compress { lz4_flex::block::compress(&seed) } else { seed.clone() };
            for (at, byte) in flips {
                if !block.is_empty() {
                    let at = at % block.len();
                    block[at] = byte;
                }
            }
            let capacity = seed.len().saturating_sub(20) + slack;
            let ours = read_all(Lz4BlockReader::new(&block, capacity as u64), step);
            let theirs = lz4_flex::block::decompress(&block, capacity);
            match (ours, theirs) {
                (Ok(ours), Ok(theirs)) => prop_assert_eq!(ours, theirs),
                (Err(_), Err(_)) => {}
                (ours, theirs) => prop_assert!(false, "ours {:?}, lz4_flex {:?}", ours.map(|o| o.len()), theirs.map(|t| t.len())),
            }
        }
    }
}
