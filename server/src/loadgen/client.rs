//! One streamed request: send it, read the server-sent events, time every token chunk.
//!
//! A *token chunk* is an event whose first choice carries non-empty `delta.content`,
//! `delta.reasoning_content` (or `delta.reasoning`) or, on `/v1/completions`, `text`.
//! The role-only first chunk of the chat endpoint, the finish chunk with an empty delta and
//! the `choices: []` usage chunk are not token chunks.

use super::conn::{ConnectError, Conns};
use super::event::StreamEvent;
use super::phases::SentBody;
use super::read;
use super::target::{redact, Secret};
use http::header::{HeaderValue, AUTHORIZATION, CONTENT_TYPE, HOST};
use http_body_util::BodyExt;
use serde_json::Value;
use std::fmt;
use std::time::{Duration, Instant};

/// What went wrong with a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// No connection (refused, unreachable, DNS).
    Connect,
    /// The server answered with a non-success status.
    HttpStatus(u16),
    /// The request took longer than the sweep's request timeout.
    Timeout,
    /// The stream broke off, or ended before `[DONE]` / a finish reason, or carried an error
    /// event, or was cut by a read bound (a line over `read::MAX_SSE_LINE_BYTES`, more bytes
    /// than `read::stream_budget_bytes`).
    BrokenStream,
    /// An event was not valid JSON.
    BadJson,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Connect => f.write_str("connect"),
            ErrorKind::HttpStatus(code) => write!(f, "HTTP {code}"),
            ErrorKind::Timeout => f.write_str("timeout"),
            ErrorKind::BrokenStream => f.write_str("broken stream"),
            ErrorKind::BadJson => f.write_str("bad JSON"),
        }
    }
}

impl ErrorKind {
    /// A stable key for counting errors by kind (`http_500`, `broken_stream`, …).
    pub fn key(&self) -> String {
        match self {
            ErrorKind::Connect => "connect".into(),
            ErrorKind::HttpStatus(code) => format!("http_{code}"),
            ErrorKind::Timeout => "timeout".into(),
            ErrorKind::BrokenStream => "broken_stream".into(),
            ErrorKind::BadJson => "bad_json".into(),
        }
    }
}

/// A failed request: the kind and a message (never containing the API key).
#[derive(Clone, Debug, PartialEq)]
pub struct RequestError {
    pub kind: ErrorKind,
    pub message: String,
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

/// Everything measured about one request. Times are milliseconds from the request's
/// *origin*: its scheduled send on an open-loop level (so a generator that sends late, or
/// a server that accepts slowly, cannot hide the wait), its actual send otherwise.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RequestSample {
    /// When the request was due (open loop only), ms after the level started.
    pub scheduled_at_ms: Option<f64>,
    /// When the request was actually sent, ms after the level started.
    pub sent_at_ms: f64,
    /// Opening the connection this request waited for (TCP, TLS), a duration in ms;
    /// `None` when it went out on a kept connection ([`super::phases`]).
    pub connect_ms: Option<f64>,
    /// Origin → the request handed to its connection (after any connect).
    pub request_sent_ms: Option<f64>,
    /// Origin → the response's status line and headers.
    pub first_byte_ms: Option<f64>,
    /// First token chunk of any kind, reasoning included.
    pub ttft_ms: Option<f64>,
    /// First content token chunk, reasoning excluded.
    pub ttft_content_ms: Option<f64>,
    /// Every gap between consecutive token chunks.
    pub gaps_ms: Vec<f64>,
    /// Origin → last token chunk.
    pub e2e_ms: Option<f64>,
    /// Origin → stream closed or error.
    pub elapsed_ms: f64,
    /// `usage.prompt_tokens`.
    pub prompt_tokens: Option<u64>,
    /// `usage.completion_tokens` (reasoning included).
    pub completion_tokens: Option<u64>,
    /// `usage.completion_tokens_details.reasoning_tokens`, else the counted reasoning chunks.
    pub reasoning_tokens: Option<u64>,
    /// Token chunks received (content or reasoning).
    pub token_chunks: u64,
    /// Token chunks that carried reasoning.
    pub reasoning_chunks: u64,
    pub finish_reason: Option<String>,
    /// The server's own decode time per token (`timings.predicted_per_token_ms`, llama.cpp).
    pub server_ms_per_token: Option<f64>,
    /// The server's own time to first token (`timings.ttft_ms`, Plateau's simulator):
    /// admission → first token, to check the client's TTFT against.
    pub server_ttft_ms: Option<f64>,
    /// `usage.prompt_tokens_details.cached_tokens`: input tokens served from the server's
    /// prefix cache (vLLM with `--enable-prompt-tokens-details`, llama.cpp, SGLang).
    pub cached_tokens: Option<u64>,
    /// The turn (or agent step) of a session this request was, 1-based (multi-turn and
    /// agentic workloads).
    pub turn: Option<u32>,
    /// The reply's content as streamed, kept when the endpoint asks for it
    /// ([`Endpoint::keep_reply`]: a conversation resends it next turn); bounded by the
    /// stream's own byte budget.
    pub reply: Option<String>,
    pub error: Option<RequestError>,
}

impl RequestSample {
    pub fn ok(&self) -> bool {
        self.error.is_none()
    }

    /// Output tokens: the server's usage, else the streamed token chunks.
    pub fn output_tokens(&self) -> Option<u64> {
        self.completion_tokens.or((self.token_chunks > 0).then_some(self.token_chunks))
    }

    /// How late the request went out: actual − scheduled send (0 for closed loop).
    pub fn send_lag_ms(&self) -> f64 {
        self.scheduled_at_ms.map_or(0.0, |s| (self.sent_at_ms - s).max(0.0))
    }

    /// When the request's clock started (scheduled send, else actual), ms after the level began.
    pub fn origin_ms(&self) -> f64 {
        self.scheduled_at_ms.unwrap_or(self.sent_at_ms)
    }

    /// (e2e − TTFT) ÷ (output tokens − 1), for requests with more than one output token.
    pub fn tpot_ms(&self) -> Option<f64> {
        let n = self.output_tokens()?;
        if n < 2 {
            return None;
        }
        Some((self.e2e_ms? - self.ttft_ms?) / (n - 1) as f64)
    }
}

/// The parts of a request shared by every call of a sweep.
#[derive(Clone, Debug)]
pub struct Endpoint {
    /// The connections to the target's origin.
    pub conns: std::sync::Arc<Conns>,
    /// The endpoint's path (and query), as the request line carries it.
    pub path: String,
    /// Connections are kept ([`super::target::Connections::KeepAlive`]).
    pub keep_alive: bool,
    /// `Bearer …`, marked sensitive.
    pub auth: Option<HeaderValue>,
    /// Only used to scrub error messages.
    pub key: Option<Secret>,
    pub timeout: Duration,
    /// Keep each reply's text ([`RequestSample::reply`]): sessions resend it.
    pub keep_reply: bool,
    /// Time every token by the simulator's model clock, as its chunks state it
    /// (`timings.sim_sent_ms`, `timings.sim_token_ms`; [`crate::loadgen::spec::Clock::Sim`]).
    pub sim_clock: bool,
    /// The level's progress so far, updated by every request ([`super::live`]).
    pub live: std::sync::Arc<super::live::Live>,
}

/// How long to wait for the end of a body after `[DONE]`.
const DRAIN: Duration = Duration::from_millis(50);

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Sends one streamed request with `body` and measures it; never fails, errors are recorded.
/// `due` is the scheduled send of an open-loop request: its times are measured from there
/// (the request goes out now even if that is late); `None` measures from the actual send.
pub async fn send(endpoint: &Endpoint, body: &Value, level_start: Instant, due: Option<Instant>) -> RequestSample {
    send_watched(endpoint, body, level_start, due, None).await
}

/// Called once, the moment a request's first token arrives, with its TTFT (ms): the
/// open loop's over-saturation detector reads TTFT then, not when the request ends.
pub type OnFirstToken = Box<dyn FnOnce(f64) + Send>;

/// [`send`], telling `on_first_token` when the first token arrives.
pub async fn send_watched(
    endpoint: &Endpoint,
    body: &Value,
    level_start: Instant,
    due: Option<Instant>,
    mut on_first_token: Option<OnFirstToken>,
) -> RequestSample {
    let sent = Instant::now();
    let start = due.map_or(sent, |d| d.min(sent));
    let mut sample = RequestSample {
        scheduled_at_ms: due.map(|d| ms(d.saturating_duration_since(level_start))),
        sent_at_ms: ms(sent.saturating_duration_since(level_start)),
        reply: endpoint.keep_reply.then(String::new),
        ..RequestSample::default()
    };
    let mut connect: Option<Duration> = None;
    endpoint.live.sent();
    let result = tokio::time::timeout(
        endpoint.timeout,
        exchange(endpoint, body, start, &mut sample, &mut connect, &mut on_first_token),
    )
    .await;
    sample.connect_ms = connect.map(ms);
    let error = match result {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e),
        Err(_) => Some(RequestError {
            kind: ErrorKind::Timeout,
            message: format!("no complete response within {:.1} s", endpoint.timeout.as_secs_f64()),
        }),
    };
    sample.elapsed_ms = match (endpoint.sim_clock, sample.e2e_ms) {
        // On the model clock a request ends with its last token.
        (true, Some(e2e)) => e2e,
        _ => ms(start.elapsed()),
    };
    sample.error = error.map(|e| RequestError { message: redact(&e.message, endpoint.key.as_ref()), ..e });
    if sample.reasoning_tokens.is_none() && sample.reasoning_chunks > 0 {
        sample.reasoning_tokens = Some(sample.reasoning_chunks);
    }
    // Its chunks were counted as they came; the server's usage, where it gave one, is the count.
    if let Some(usage) = sample.completion_tokens {
        let chunks = i64::try_from(sample.token_chunks).unwrap_or(i64::MAX);
        endpoint.live.tokens(i64::try_from(usage).unwrap_or(i64::MAX).saturating_sub(chunks));
    }
    endpoint.live.ended(sample.error.is_none().then_some(sample.elapsed_ms));
    if sample.error.is_some() {
        tracing::debug!(error = ?sample.error, "request failed");
    }
    sample
}

fn err(kind: ErrorKind, message: impl Into<String>) -> RequestError {
    RequestError { kind, message: message.into() }
}

/// The error and its causes on one line (hyper's own text hides the useful part).
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// A failed exchange on an open connection: the answer never came, or broke off.
fn broken(e: &hyper::Error) -> RequestError {
    err(ErrorKind::BrokenStream, chain(e))
}

fn connect_failed(e: ConnectError) -> RequestError {
    err(ErrorKind::Connect, e.0)
}

/// The error of a request written to a kept connection the server had already closed:
/// no response byte came back (the request was not taken, or the connection ended, was
/// reset or broke before the answer's head).
fn closed_under_us(e: &hyper::Error) -> bool {
    if e.is_canceled() || e.is_incomplete_message() || e.is_closed() {
        return true;
    }
    let text = chain(e).to_ascii_lowercase();
    ["connection reset", "broken pipe", "unexpected eof"].iter().any(|s| text.contains(s))
}

/// Opens connections until `n` are open and idle (kept alive only), so the level that
/// follows starts on open connections and its requests wait for none. A failure here is
/// the level's to find.
pub async fn warm(endpoint: &Endpoint, n: usize) {
    endpoint.conns.fill(n).await;
}

/// A control call to the target (not a measured request): `POST path` with `body` on one
/// of the sweep's connections; its status, the answer read (bounded) and dropped.
pub async fn post_json(endpoint: &Endpoint, path: &str, body: &Value) -> Result<http::StatusCode, String> {
    let json = bytes::Bytes::from(serde_json::to_vec(body).map_err(|e| e.to_string())?);
    let request = http::Request::post(path)
        .header(HOST, endpoint.conns.authority())
        .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
        .body(SentBody::new(json).0)
        .map_err(|e| e.to_string())?;
    let (mut conn, _) = endpoint.conns.take().await.map_err(|e| e.0)?;
    let answer = conn.send(request).await.map_err(|e| chain(&e))?;
    let status = answer.status();
    let read = read::read_body_bounded(answer.into_body(), read::MAX_ERROR_BODY_BYTES).await.map_err(|e| chain(&e))?;
    if read.ended {
        endpoint.conns.give_back(conn);
    }
    Ok(status)
}

/// The output tokens `body` asks for (`max_tokens`, or `max_completion_tokens` set through
/// the extra body, the larger of the two), which bound the size of its stream.
fn asked_max_tokens(body: &Value) -> Option<u64> {
    ["max_tokens", "max_completion_tokens"].iter().filter_map(|k| body.get(*k).and_then(Value::as_u64)).max()
}

/// The first `max` characters of `text`, with `…` when cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", text.get(..i).unwrap_or(text)),
        None => text.to_owned(),
    }
}

async fn exchange(
    endpoint: &Endpoint,
    body: &Value,
    start: Instant,
    s: &mut RequestSample,
    connect: &mut Option<Duration>,
    on_first_token: &mut Option<OnFirstToken>,
) -> Result<(), RequestError> {
    // Serialised once; a request sent again reuses the bytes.
    let json = bytes::Bytes::from(serde_json::to_vec(body).map_err(|e| err(ErrorKind::BadJson, e.to_string()))?);
    let request = || {
        let (body, taken) = SentBody::new(json.clone());
        let mut r = http::Request::post(endpoint.path.as_str())
            .header(HOST, endpoint.conns.authority())
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(auth) = &endpoint.auth {
            r = r.header(AUTHORIZATION, auth.clone());
        }
        r.body(body)
            .map(|r| (r, taken))
            .map_err(|e| err(ErrorKind::Connect, format!("the request cannot be built: {e}")))
    };
    let (mut conn, opened) = endpoint.conns.take().await.map_err(connect_failed)?;
    *connect = opened;
    let (first, mut taken) = request()?;
    let response = match conn.send(first).await {
        Ok(r) => r,
        // A kept connection the server closed as it was picked: once more, on a new
        // connection. The request's times still run from its first send.
        Err(e) if conn.reused && closed_under_us(&e) => {
            tracing::debug!(error = %chain(&e), "kept connection closed by the server; sent again");
            let (fresh, took) = endpoint.conns.take_new().await.map_err(connect_failed)?;
            *connect = Some(connect.unwrap_or_default() + took);
            conn = fresh;
            let (again, again_taken) = request()?;
            taken = again_taken;
            conn.send(again).await.map_err(|e| broken(&e))?
        }
        Err(e) => return Err(broken(&e)),
    };
    s.first_byte_ms = Some(ms(start.elapsed()));
    s.request_sent_ms = taken.get().map(|t| ms(t.saturating_duration_since(start)));
    let status = response.status();
    let mut stream = response.into_body();
    if !status.is_success() {
        // Only the start of an error body becomes the message: read that much, no more.
        let read = read::read_body_bounded(&mut stream, read::MAX_ERROR_BODY_BYTES).await.unwrap_or_default();
        if read.ended {
            endpoint.conns.give_back(conn);
        }
        return Err(err(ErrorKind::HttpStatus(status.as_u16()), clip(read.text_lossy().trim(), 300)));
    }
    let budget_bytes = read::stream_budget_bytes(asked_max_tokens(body));
    let mut received_bytes: u64 = 0;
    let mut lines = read::SseLines::default();
    let mut last_token: Option<f64> = None;
    let mut done = false;
    let mut ended = false;
    'chunks: loop {
        let Some(frame) = stream.frame().await else {
            ended = true;
            break;
        };
        let Ok(bytes) = frame.map_err(|e| broken(&e))?.into_data() else { continue };
        let now = Instant::now();
        received_bytes = received_bytes.saturating_add(bytes.len() as u64);
        lines.push(&bytes);
        let chunks_before = s.token_chunks;
        while let Some(line) = lines.next_line().map_err(|e| err(ErrorKind::BrokenStream, e.to_string()))? {
            let line = std::str::from_utf8(line)
                .map_err(|_| err(ErrorKind::BadJson, "event is not UTF-8"))?
                .trim_end_matches('\r');
            let Some(data) = line.strip_prefix("data:") else { continue };
            let data = data.trim();
            if data == "[DONE]" {
                done = true;
                endpoint.live.tokens(i64::try_from(s.token_chunks - chunks_before).unwrap_or(0));
                break 'chunks;
            }
            if data.is_empty() {
                continue;
            }
            let at = Tick { wall_ms: ms(now.saturating_duration_since(start)), sim: endpoint.sim_clock };
            on_event(data, at, &mut last_token, s)?;
            if let (Some(ttft), true) = (s.ttft_ms, on_first_token.is_some()) {
                if let Some(tell) = on_first_token.take() {
                    tell(ttft);
                }
            }
        }
        endpoint.live.tokens(i64::try_from(s.token_chunks - chunks_before).unwrap_or(0));
        // After the chunk's lines: an over-long line is named as such, whichever bound a
        // large chunk crosses first.
        if received_bytes > budget_bytes {
            return Err(err(
                ErrorKind::BrokenStream,
                format!("the stream sent more than {budget_bytes} bytes (the bound for its max_tokens)"),
            ));
        }
    }
    if done {
        // Read the rest of the body (normally only the chunked terminator) so the
        // connection can carry the next request instead of being closed; not timed, and no
        // more than one line's worth: a target that keeps sending loses the connection.
        let mut drained_bytes = 0;
        while drained_bytes <= read::MAX_SSE_LINE_BYTES {
            match tokio::time::timeout(DRAIN, stream.frame()).await {
                Ok(Some(Ok(f))) => drained_bytes += f.data_ref().map_or(0, bytes::Bytes::len),
                Ok(None) => {
                    ended = true;
                    break;
                }
                _ => break,
            }
        }
    } else if s.finish_reason.is_none() {
        return Err(err(ErrorKind::BrokenStream, "stream ended before [DONE] or a finish reason"));
    }
    if ended {
        // Given back by this request, before its task ends: the next request finds it.
        endpoint.conns.give_back(conn);
    }
    Ok(())
}

/// When an event arrived: ms since the request's clock started, and whether the event's
/// own model time (the simulator's clock) replaces it.
#[derive(Clone, Copy)]
struct Tick {
    wall_ms: f64,
    sim: bool,
}

fn on_event(data: &str, tick: Tick, last_token: &mut Option<f64>, s: &mut RequestSample) -> Result<(), RequestError> {
    let v =
        StreamEvent::parse(data).map_err(|e| err(ErrorKind::BadJson, format!("{e} in event {}", clip(data, 120))))?;
    if let Some(message) = v.error {
        return Err(err(ErrorKind::BrokenStream, format!("error event: {}", clip(&message, 300))));
    }
    if let Some(u) = v.usage {
        s.prompt_tokens = u.prompt_tokens.or(s.prompt_tokens);
        s.completion_tokens = u.completion_tokens.or(s.completion_tokens);
        s.reasoning_tokens = u.reasoning_tokens.or(s.reasoning_tokens);
        s.cached_tokens = u.cached_tokens.or(s.cached_tokens);
    }
    if let Some(t) = v.server_ms_per_token {
        s.server_ms_per_token = Some(t);
    }
    if let Some(t) = v.server_ttft_ms {
        s.server_ttft_ms = Some(t);
    }
    let Some(choice) = v.choice else {
        return Ok(());
    };
    if let Some(reason) = choice.finish_reason {
        s.finish_reason = Some(reason);
    }
    let (content, reasoning) = (choice.content.is_some(), choice.reasoning);
    if let (Some(reply), Some(text)) = (s.reply.as_mut(), choice.content) {
        reply.push_str(&text);
    }
    if !(content || reasoning) {
        return Ok(());
    }
    let at = match (tick.sim, v.sim_sent_ms, v.sim_token_ms) {
        (true, Some(sent), Some(token)) => {
            // The request's clock starts when the simulator took it, on the model clock.
            s.sent_at_ms = sent;
            token - sent
        }
        _ => tick.wall_ms,
    };
    s.ttft_ms.get_or_insert(at);
    if content {
        s.ttft_content_ms.get_or_insert(at);
    }
    if reasoning {
        s.reasoning_chunks += 1;
    }
    if let Some(prev) = *last_token {
        s.gaps_ms.push((at - prev).max(0.0));
    }
    *last_token = Some(at);
    s.token_chunks += 1;
    s.e2e_ms = Some(at);
    Ok(())
}

/// One event through the parser, for tests.
#[cfg(test)]
pub(crate) fn parse_event_for_test(data: &str, s: &mut RequestSample) -> Result<(), RequestError> {
    on_event(data, Tick { wall_ms: 0.0, sim: false }, &mut None, s)
}
