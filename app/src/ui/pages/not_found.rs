//! The page for an unknown address.

use crate::ui::components::set_page_status;
use leptos::prelude::*;

/// 404 page.
#[component]
pub fn NotFound() -> impl IntoView {
    set_page_status(404);
    view! {
        <h1>"Page not found"</h1>
        <p><a href="/">"Back to the runs"</a></p>
    }
}
