//! A request's phases before its first token, timed separately so a connection's cost is
//! seen instead of hidden inside TTFT:
//!
//! - **connect**: opening a connection the request waited for (TCP, TLS, the HTTP
//!   handshake; the address is pinned, so no look-up). A request that got a kept
//!   connection ([`super::conn::Conns::take`]) has none: it is absent, not 0. Connections
//!   are opened in the request's own task, so the time belongs to the request that waited.
//! - **sent**: the request handed to its connection — the moment hyper takes the body
//!   ([`SentBody`]), after the head is queued on the connection.
//! - **first byte**: the response's status line and headers arrived.

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Instant;

/// A request body that notes when the connection took it. Its exact length is known, so
/// the request carries a `Content-Length` as before.
#[derive(Debug)]
pub struct SentBody {
    data: Option<Bytes>,
    taken: Arc<OnceLock<Instant>>,
}

impl SentBody {
    /// The body and the clock it sets when taken.
    pub fn new(data: Bytes) -> (Self, Arc<OnceLock<Instant>>) {
        let taken = Arc::new(OnceLock::new());
        (Self { data: Some(data), taken: Arc::clone(&taken) }, taken)
    }
}

impl Body for SentBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        Poll::Ready(this.data.take().map(|d| {
            let _ = this.taken.set(Instant::now());
            Ok(Frame::data(d))
        }))
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.data.as_ref().map_or(0, |d| d.len() as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_keeps_its_length_and_notes_when_it_was_taken() {
        let (mut body, taken) = SentBody::new(Bytes::from_static(b"{\"a\":1}"));
        assert_eq!(body.size_hint().exact(), Some(7));
        assert!(!body.is_end_stream() && taken.get().is_none());
        let waker = futures_util::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        let frame = Pin::new(&mut body).poll_frame(&mut cx);
        let Poll::Ready(Some(Ok(frame))) = frame else { panic!("one data frame") };
        assert_eq!(frame.into_data().ok(), Some(Bytes::from_static(b"{\"a\":1}")));
        assert!(taken.get().is_some() && body.is_end_stream());
        assert!(matches!(Pin::new(&mut body).poll_frame(&mut cx), Poll::Ready(None)));
    }
}
