//! The page for an unknown address.

use leptos::prelude::*;

/// 404 page.
#[component]
pub fn NotFound() -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
        resp.set_status(axum_status_not_found());
    }
    view! {
        <h1>"Page not found"</h1>
        <p><a href="/">"Back to the runs"</a></p>
    }
}

#[cfg(feature = "ssr")]
fn axum_status_not_found() -> http::StatusCode {
    http::StatusCode::NOT_FOUND
}
