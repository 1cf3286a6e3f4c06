//! A request's phases before its first token, timed separately so a connection's cost is
//! seen instead of hidden inside TTFT:
//!
//! - **connect**: opening a connection the request waited for (TCP, TLS; the address is
//!   pinned, so no look-up). A request that got a kept-alive connection from the pool has
//!   none. [`TimeConnects`] wraps reqwest's connector; the duration lands in the
//!   request's own task ([`scoped`]), so it belongs to the request that waited for it: a
//!   connection that finishes opening after its request took another from the pool
//!   finishes in the background, and nobody is charged for it.
//! - **sent**: the request handed to its connection — the moment hyper takes the body
//!   ([`SentBody`]), after the head is queued on a connection of its own.
//! - **first byte**: the response's status line and headers arrived (`send()` returned).
//!
//! Why a connector layer and a body wrapper, not a hand-written HTTP client: reqwest (and
//! hyper below it) keeps pooling, redirects refused, the pinned addresses and the error
//! kinds the rest of the generator relies on; these two hooks are the only places the
//! phases can be seen from outside it.

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use std::cell::Cell;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

tokio::task_local! {
    /// Connection set-up the current request waited for, summed (a request re-sent after
    /// its pooled connection closed under it may open one more).
    static CONNECT: Cell<Option<Duration>>;
}

/// Runs `fut` (one request) with its own connect clock; returns its output and the
/// connection set-up it waited for (`None`: it reused a kept-alive connection).
pub async fn scoped<F: Future>(fut: F) -> (F::Output, Option<Duration>) {
    CONNECT
        .scope(Cell::new(None), async move {
            let out = fut.await;
            (out, CONNECT.try_with(Cell::get).ok().flatten())
        })
        .await
}

/// The layer for `reqwest::ClientBuilder::connector_layer`.
#[derive(Clone, Copy, Debug, Default)]
pub struct TimeConnects;

impl<S> tower_layer::Layer<S> for TimeConnects {
    type Service = Timed<S>;
    fn layer(&self, inner: S) -> Timed<S> {
        Timed(inner)
    }
}

/// A connector that tells the task polling it how long a successful connect took.
#[derive(Clone, Debug)]
pub struct Timed<S>(S);

impl<S, R> tower_service::Service<R> for Timed<S>
where
    S: tower_service::Service<R>,
    S::Future: Send + 'static,
    S::Response: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, req: R) -> Self::Future {
        let connecting = self.0.call(req);
        Box::pin(async move {
            let started = Instant::now();
            let out = connecting.await;
            if out.is_ok() {
                let took = started.elapsed();
                // Outside a request's scope (warm-up, or finished in the background after
                // the request took a pooled connection) nobody waited: nothing to record.
                let _ = CONNECT.try_with(|c| c.set(Some(c.get().unwrap_or_default() + took)));
            }
            out
        })
    }
}

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

    #[tokio::test]
    async fn a_connect_is_charged_to_the_request_that_waited_for_it_only() {
        let svc = tower_service::Service::call(
            &mut Timed(tower_util_fn(|| async {
                tokio::time::sleep(Duration::from_millis(20)).await;
                Ok::<_, Infallible>(())
            })),
            (),
        );
        let ((), connect) = scoped(async { svc.await.unwrap_or(()) }).await;
        let took = connect.expect("the request waited for the connect");
        assert!(took >= Duration::from_millis(20), "{took:?}");
        // Outside a scope (a warm-up) it is not recorded anywhere, and does not panic.
        let outside = tower_service::Service::call(&mut Timed(tower_util_fn(|| async { Ok::<_, Infallible>(()) })), ());
        assert!(outside.await.is_ok());
        // A request that never connected has no connect time.
        let ((), none) = scoped(async {}).await;
        assert_eq!(none, None);
    }

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

    /// A connector stand-in: a service from a closure returning a future.
    #[derive(Clone)]
    struct FnService<F>(F);
    fn tower_util_fn<F>(f: F) -> FnService<F> {
        FnService(f)
    }
    impl<F, Fut> tower_service::Service<()> for FnService<F>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<(), Infallible>> + Send + 'static,
    {
        type Response = ();
        type Error = Infallible;
        type Future = Fut;
        fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }
        fn call(&mut self, _req: ()) -> Fut {
            (self.0)()
        }
    }
}
