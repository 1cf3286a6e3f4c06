//! How a page shows an error it got from the server.

use crate::error::AppError;
use leptos::prelude::*;

/// Sets the HTTP status of the page being rendered on the server (pages render in
/// `SsrMode::Async`, so the status is still open when a resource's error arrives). In the
/// browser there is no response to set: it does nothing.
pub fn set_page_status(status: u16) {
    #[cfg(feature = "ssr")]
    if let (Some(resp), Ok(code)) = (use_context::<leptos_axum::ResponseOptions>(), http::StatusCode::from_u16(status))
    {
        resp.set_status(code);
    }
    #[cfg(not(feature = "ssr"))]
    let _ = status;
}

/// A readable error message; on the server the page answers with the error's status
/// (404 for a missing run, report or snapshot, 400 for a bad request).
#[component]
pub fn ErrorBox(error: AppError) -> impl IntoView {
    set_page_status(error.status());
    let title = match error {
        AppError::NotFound(_) => "Not found",
        AppError::BadRequest(_) => "That did not work",
        AppError::Internal | AppError::Transport(_) => "Something went wrong",
    };
    view! {
        <div class="error-box" role="alert">
            <strong>{title}</strong>
            <p>{error.to_string()}</p>
        </div>
    }
}
