//! How a page shows an error it got from the server.

use crate::error::AppError;
use leptos::prelude::*;

/// A readable error message.
#[component]
pub fn ErrorBox(error: AppError) -> impl IntoView {
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
