//! The target as the sweep reaches it (the HTTP client, URL and auth header every request
//! shares) and as a run's page shows it (its address without credentials).

use crate::loadgen::client::Endpoint;
use crate::loadgen::conn::Conns;
use crate::loadgen::error::LoadgenError;
use crate::loadgen::target::{Connections, Target};
use reqwest::header::HeaderValue;
use std::time::Duration;

/// The target as a run's page shows it: scheme, host, port and path, never a user name,
/// password, query or fragment (a CLI sweep may be given any URL).
pub(crate) fn target_label(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.set_query(None);
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => "an unreadable address".to_owned(),
    }
}

/// The connections, path and auth header shared by every request to `target`.
pub(crate) fn endpoint_for(target: &Target, timeout: Duration) -> Result<Endpoint, LoadgenError> {
    // Connections are kept alive unless asked otherwise: servers close them on their own
    // terms (llama.cpp's after 5 requests, with `Connection: close`; any when idle), and a
    // request that meets a connection closed under it is sent once more on a new one
    // (`client::exchange`). Never a redirect followed: a 3xx is the request's error, like
    // any other non-success status. Never a proxy, and only the checked addresses.
    let conns = Conns::new(target, timeout.min(Duration::from_secs(10)))?;
    let url = reqwest::Url::parse(&target.url())
        .map_err(|e| LoadgenError::InvalidSpec(format!("the base URL cannot be read: {e}")))?;
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    };
    let auth = match &target.api_key {
        None => None,
        Some(key) => {
            let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose()))
                .map_err(|_| LoadgenError::InvalidSpec("the API key has characters a header cannot carry".into()))?;
            value.set_sensitive(true);
            Some(value)
        }
    };
    let keep_alive = target.connections == Connections::KeepAlive;
    Ok(Endpoint {
        conns: std::sync::Arc::new(conns),
        path,
        keep_alive,
        auth,
        key: target.api_key.clone(),
        timeout,
        keep_reply: false,
        sim_clock: false,
        live: std::sync::Arc::default(),
    })
}

/// Announces a closed-loop trial to a simulator on its model clock (`POST /sim/clock`):
/// `requests` requests, `in_flight` at a time, start now.
pub(crate) async fn announce_to_sim(
    endpoint: &Endpoint,
    target: &Target,
    in_flight: usize,
    requests: usize,
) -> Result<(), LoadgenError> {
    let url = format!("{}/sim/clock", target.base_url.trim_end_matches('/'));
    let path = reqwest::Url::parse(&url).map(|u| u.path().to_owned()).unwrap_or_else(|_| "/sim/clock".into());
    let body = serde_json::json!({ "in_flight": in_flight, "requests": requests });
    let status = crate::loadgen::client::post_json(endpoint, &path, &body)
        .await
        .map_err(|e| LoadgenError::Client(format!("announcing a level to the simulator: {e}")))?;
    if !status.is_success() {
        return Err(LoadgenError::InvalidSpec(format!(
            "the sweep runs on the simulator's clock, but {url} answered {status} (is it `plateau sim --clock model`?)"
        )));
    }
    Ok(())
}
