//! The error that crosses the server-function boundary into the browser.
//!
//! It carries only what a user may read. Detail (SQL errors, paths) is logged on the
//! server where the error is converted, never serialised to the client.

use leptos::server_fn::codec::JsonEncoding;
use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};
use serde::{Deserialize, Serialize};

/// An error a page can show.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum AppError {
    /// The thing asked for does not exist (unknown run id, …).
    #[error("{0} was not found")]
    NotFound(String),
    /// The request itself was wrong; the text says how.
    #[error("{0}")]
    BadRequest(String),
    /// A server-side failure; the log has the detail.
    #[error("something went wrong on the server; the server log has the details")]
    Internal,
    /// The call to the server failed in transit (network, encoding).
    #[error("the server could not be reached: {0}")]
    Transport(String),
}

impl AppError {
    /// The HTTP status of this error: a page showing it, or a server function returning
    /// it, answers with this.
    pub fn status(&self) -> u16 {
        match self {
            AppError::NotFound(_) => 404,
            AppError::BadRequest(_) => 400,
            AppError::Internal | AppError::Transport(_) => 500,
        }
    }
}

/// Sets the HTTP status of the response being produced on the server: a page rendered in
/// `SsrMode::Async` (its status is still open when a resource's error arrives) or a server
/// function's answer. In the browser there is no response to set: it does nothing.
pub fn set_response_status(status: u16) {
    #[cfg(feature = "ssr")]
    if let (Some(resp), Ok(code)) =
        (leptos::prelude::use_context::<leptos_axum::ResponseOptions>(), http::StatusCode::from_u16(status))
    {
        resp.set_status(code);
    }
    #[cfg(not(feature = "ssr"))]
    let _ = status;
}

impl FromServerFnError for AppError {
    type Encoder = JsonEncoding;

    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        AppError::Transport(value.to_string())
    }
}

#[cfg(feature = "ssr")]
impl From<crate::db::DbError> for AppError {
    fn from(e: crate::db::DbError) -> Self {
        match e {
            crate::db::DbError::NotFound(what) => AppError::NotFound(what),
            crate::db::DbError::Text(t) => AppError::BadRequest(t.to_string()),
            e @ crate::db::DbError::Slo { .. } => AppError::BadRequest(e.to_string()),
            e @ crate::db::DbError::Demand { .. } => AppError::BadRequest(e.to_string()),
            e @ crate::db::DbError::Price(_) => AppError::BadRequest(e.to_string()),
            e @ crate::db::DbError::Fact(_) => AppError::BadRequest(e.to_string()),
            other => {
                tracing::error!(error = %other, "database error");
                AppError::Internal
            }
        }
    }
}
