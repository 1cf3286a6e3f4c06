//! Reading from targets: every byte Plateau reads from a sweep target (its error bodies,
//! its event stream), from a metrics endpoint, or from a Plateau
//! server a sweep writes to, goes through this module, and every such read is bounded.
//! A target is not trusted: a 400 MB error body, an endless `/v1/models` answer or an
//! event line without a newline must cost a bounded amount of memory and CPU, never the
//! whole process.
//!
//! - [`read_bounded`]: a response body, up to a cap; beyond it the response is dropped
//!   (its connection closed, not read to the end) and the caller keeps what it read.
//! - [`SseLines`]: the server-sent-event framer: bytes in, complete lines out, linear in
//!   the bytes received (the newline search resumes where it stopped) and with a cap on
//!   one line ([`MAX_SSE_LINE_BYTES`]).
//! - [`stream_budget_bytes`]: the most one streamed response may carry in total.
//!
//! The caps of reads from targets live here, one `pub const` each, so they can be listed
//! in one place (docs/security.md); the metrics page's cap is `scrape::MAX_BODY_BYTES`.

/// The most of a target's error body (a non-2xx answer to a streamed request) read: only
/// its start becomes the request's error message (clipped to 300 characters), so a few KB
/// are plenty; the rest is not read and the connection is closed.
pub const MAX_ERROR_BODY_BYTES: usize = 4 * 1024;

/// The longest line of an event stream. A token chunk is a few hundred bytes; the final
/// usage event or a large tool-call delta may be tens of KB; 1 MiB is generous. A longer
/// line fails the request (a broken stream) instead of being buffered without end.
pub const MAX_SSE_LINE_BYTES: usize = 1024 * 1024;

/// What one streamed response may carry besides its token chunks: the role chunk, the
/// finish and usage events, keep-alive comments, and room for one maximal line.
pub const STREAM_BASE_BYTES: u64 = 1024 * 1024;

/// What one streamed response may carry per output token asked (`max_tokens`). A token
/// chunk is 100–400 bytes of JSON (vLLM, SGLang, llama.cpp, TGI); with `logprobs` and 20
/// top log-probabilities about 2 KB. 16 KiB per token leaves a wide margin for servers that
/// send a chunk per token with large metadata, or several choices (`n`).
pub const STREAM_BYTES_PER_TOKEN: u64 = 16 * 1024;

/// The most one streamed response may carry in total, for a request asking for
/// `max_tokens` (`None`: not in the body, so the largest a sweep may ask,
/// `bounds::MAX_OUTPUT_TOKENS`). Nothing is buffered beyond one line, so this bounds time,
/// not memory: a target streaming bytes that are not tokens (empty lines, comments) fails
/// the request once past it instead of holding it to its timeout (up to an hour).
pub fn stream_budget_bytes(max_tokens: Option<u64>) -> u64 {
    let tokens = max_tokens.unwrap_or(u64::from(super::bounds::MAX_OUTPUT_TOKENS));
    STREAM_BASE_BYTES.saturating_add(tokens.saturating_mul(STREAM_BYTES_PER_TOKEN))
}

/// The start of a response body, at most the cap asked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bounded {
    /// The first bytes of the body, at most the cap.
    pub bytes: Vec<u8>,
    /// The body was longer than the cap: the rest was not read, the connection closed.
    pub truncated: bool,
    /// The body was read to its end (its connection can carry another request).
    pub ended: bool,
}

impl Bounded {
    /// The bytes read, as text (invalid UTF-8 replaced).
    pub fn text_lossy(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

/// Reads `response`'s body up to `max_bytes` and stops there: a longer body is cut at
/// `max_bytes` (`truncated`), and the response is dropped unread, which closes its
/// connection instead of returning it to the pool. Memory held: at most `max_bytes` plus
/// one chunk of the transport. A declared `Content-Length` over the cap reads only the cap.
pub async fn read_bounded(response: reqwest::Response, max_bytes: usize) -> Result<Bounded, reqwest::Error> {
    read_body_bounded(reqwest::Body::from(response), max_bytes).await
}

/// [`read_bounded`] for any body (a target's answer on the load generator's own
/// connections, [`super::conn`]); `ended` tells whether it was read to its end.
pub async fn read_body_bounded<B>(body: B, max_bytes: usize) -> Result<Bounded, B::Error>
where
    B: http_body::Body<Data = bytes::Bytes> + Unpin,
{
    use http_body_util::BodyExt;
    let mut body = body;
    let mut out = Bounded::default();
    while let Some(frame) = body.frame().await {
        let Ok(chunk) = frame?.into_data() else { continue };
        let room = max_bytes.saturating_sub(out.bytes.len());
        if chunk.len() > room {
            out.bytes.extend_from_slice(chunk.get(..room).unwrap_or_default());
            out.truncated = true;
            return Ok(out);
        }
        out.bytes.extend_from_slice(&chunk);
    }
    out.ended = true;
    Ok(out)
}

/// A line of an event stream longer than [`MAX_SSE_LINE_BYTES`] (or the framer's cap).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("an event line longer than {max_bytes} bytes")]
pub struct LineTooLong {
    pub max_bytes: usize,
}

/// The framer of a server-sent-event stream: push the bytes as they arrive, take the
/// complete lines (without their `\n`; a `\r` before it is the caller's to trim).
///
/// Linear in the bytes pushed: the newline search resumes where it stopped, so a line
/// split over many chunks is scanned once, and consumed lines are dropped from the buffer
/// at most once per push. Bounded: the pending line may not exceed `max_line_bytes`.
#[derive(Debug)]
pub struct SseLines {
    buf: Vec<u8>,
    /// Where the next line starts in `buf` (the lines before it were taken).
    start: usize,
    /// Bytes after `start` already searched for a newline (none found).
    searched: usize,
    max_line_bytes: usize,
    /// Bytes examined by the newline search, in all: the framer's work, for tests.
    scanned_bytes: u64,
}

impl Default for SseLines {
    fn default() -> Self {
        Self::new(MAX_SSE_LINE_BYTES)
    }
}

impl SseLines {
    pub fn new(max_line_bytes: usize) -> Self {
        Self { buf: Vec::new(), start: 0, searched: 0, max_line_bytes, scanned_bytes: 0 }
    }

    /// Appends bytes received. The lines already taken are dropped first (only the
    /// pending partial line is moved, once).
    pub fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 {
            self.buf.drain(..self.start.min(self.buf.len()));
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete line, if one has arrived; an error once the pending line is
    /// longer than the cap (with or without its newline).
    pub fn next_line(&mut self) -> Result<Option<&[u8]>, LineTooLong> {
        let pending = self.buf.get(self.start..).unwrap_or_default();
        let fresh = pending.get(self.searched..).unwrap_or_default();
        let found = fresh.iter().position(|b| *b == b'\n');
        self.scanned_bytes += found.map_or(fresh.len(), |i| i + 1) as u64;
        match found {
            None => {
                self.searched = pending.len();
                if pending.len() > self.max_line_bytes {
                    return Err(LineTooLong { max_bytes: self.max_line_bytes });
                }
                Ok(None)
            }
            Some(i) => {
                let len = self.searched + i;
                if len > self.max_line_bytes {
                    return Err(LineTooLong { max_bytes: self.max_line_bytes });
                }
                let line_start = self.start;
                self.start += len + 1;
                self.searched = 0;
                Ok(self.buf.get(line_start..line_start + len))
            }
        }
    }

    /// Bytes examined by the newline search so far.
    pub fn scanned_bytes(&self) -> u64 {
        self.scanned_bytes
    }

    /// Bytes held: the pending partial line, and taken lines not yet dropped.
    pub fn buffered_bytes(&self) -> usize {
        self.buf.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(framer: &mut SseLines) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(line) = framer.next_line().unwrap() {
            out.push(String::from_utf8(line.to_vec()).unwrap());
        }
        out
    }

    #[test]
    fn a_line_split_over_one_byte_chunks_comes_out_whole_and_is_scanned_once() {
        let text = "data: {\"choices\":[]}\n\ndata: [DONE]\n";
        let mut f = SseLines::default();
        let mut got = Vec::new();
        for b in text.as_bytes() {
            f.push(std::slice::from_ref(b));
            got.extend(lines(&mut f));
        }
        assert_eq!(got, ["data: {\"choices\":[]}", "", "data: [DONE]"]);
        assert_eq!(f.scanned_bytes(), text.len() as u64, "every byte searched once");
    }

    #[test]
    fn crlf_lines_keep_their_cr_for_the_caller_and_several_lines_per_chunk_work() {
        let mut f = SseLines::default();
        f.push(b"data: a\r\n\r\ndata: b\r\ndata: par");
        assert_eq!(lines(&mut f), ["data: a\r", "\r", "data: b\r"]);
        f.push(b"tial\r\n");
        assert_eq!(lines(&mut f), ["data: partial\r"]);
        assert_eq!(lines(&mut f), Vec::<String>::new());
    }

    #[test]
    fn ten_megabytes_without_a_newline_are_scanned_once_in_all() {
        // 10 MB in 1 KB chunks: the quadratic framer searched the pending line again on
        // every chunk (≈ 5·10¹⁰ bytes); this one searches each byte once.
        let mut f = SseLines::new(usize::MAX);
        let chunk = vec![b'x'; 1024];
        let total = 10 * 1024 * 1024;
        for _ in 0..total / chunk.len() {
            f.push(&chunk);
            assert_eq!(f.next_line(), Ok(None));
        }
        assert_eq!(f.scanned_bytes(), total as u64);
        f.push(b"\n");
        assert_eq!(f.next_line().unwrap().map(<[u8]>::len), Some(total));
        assert_eq!(f.scanned_bytes(), total as u64 + 1);
    }

    #[test]
    fn a_line_over_the_cap_is_an_error_with_or_without_its_newline() {
        let mut f = SseLines::new(8);
        f.push(b"data: 12");
        assert_eq!(f.next_line(), Ok(None), "exactly the cap is a line");
        f.push(b"3");
        let e = f.next_line().unwrap_err();
        assert_eq!(e.to_string(), "an event line longer than 8 bytes");
        let mut g = SseLines::new(8);
        g.push(b"data: 123\n");
        assert_eq!(g.next_line(), Err(LineTooLong { max_bytes: 8 }));
        let mut h = SseLines::new(8);
        h.push(b"data: 12\nda");
        assert_eq!(h.next_line().unwrap(), Some(&b"data: 12"[..]));
        assert_eq!(h.next_line(), Ok(None));
        assert_eq!(SseLines::default().max_line_bytes, MAX_SSE_LINE_BYTES);
        assert_eq!(
            LineTooLong { max_bytes: MAX_SSE_LINE_BYTES }.to_string(),
            "an event line longer than 1048576 bytes"
        );
    }

    #[test]
    fn taken_lines_are_dropped_so_the_buffer_holds_about_one_line() {
        let mut f = SseLines::default();
        for _ in 0..10_000 {
            f.push(b"data: {\"choices\":[{\"delta\":{\"content\":\"t\"}}]}\n\n");
            assert_eq!(lines(&mut f).len(), 2);
            assert!(f.buffered_bytes() < 200, "{}", f.buffered_bytes());
        }
    }

    #[test]
    fn the_stream_budget_grows_with_max_tokens_and_saturates() {
        assert_eq!(stream_budget_bytes(Some(0)), STREAM_BASE_BYTES);
        assert_eq!(stream_budget_bytes(Some(100)), STREAM_BASE_BYTES + 100 * STREAM_BYTES_PER_TOKEN);
        assert_eq!(
            stream_budget_bytes(None),
            stream_budget_bytes(Some(u64::from(crate::loadgen::bounds::MAX_OUTPUT_TOKENS)))
        );
        assert_eq!(stream_budget_bytes(Some(u64::MAX)), u64::MAX);
    }
}
