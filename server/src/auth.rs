//! Who is making a request, and whether they may do it.
//!
//! Every request passes through [`identify`], which puts a [`Principal`] in the request's
//! extensions; handlers that write read it to record the author. With auth off (the
//! loopback default) everyone is the local user and may write.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

/// How the server decides who may read and write.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum AuthMode {
    /// No login: every visitor may read and write (meant for loopback).
    #[default]
    Off,
}

/// The author of a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Principal {
    /// The name recorded as the author of what this request writes.
    pub name: String,
    /// False for anonymous visitors when auth is on: they may only read.
    pub may_write: bool,
}

impl Principal {
    /// The single user of a server running without auth.
    pub fn local() -> Self {
        Self { name: "local".into(), may_write: true }
    }
}

/// Identifies the requester and stores a [`Principal`] in the request's extensions.
pub async fn identify(State(_mode): State<AuthMode>, mut req: Request<Body>, next: Next) -> Response {
    req.extensions_mut().insert(Principal::local());
    next.run(req).await
}
