//! How a page shows an error it got from the server.

use crate::error::AppError;
use leptos::prelude::*;

/// Sets the HTTP status of the page being rendered on the server (see
/// [`crate::error::set_response_status`]).
pub use crate::error::set_response_status as set_page_status;

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
