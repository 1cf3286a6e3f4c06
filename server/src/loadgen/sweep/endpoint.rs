//! The target as the sweep reaches it (the HTTP client, URL and auth header every request
//! shares) and as a run's page shows it (its address without credentials).

use crate::loadgen::client::Endpoint;
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

/// The HTTP client, URL and auth header shared by every request to `target`.
pub(crate) fn endpoint_for(target: &Target, timeout: Duration) -> Result<Endpoint, LoadgenError> {
    let mut builder =
        reqwest::Client::builder().tcp_nodelay(true).connect_timeout(timeout.min(Duration::from_secs(10)));
    builder = match target.connections {
        // Reused connections: servers close them on their own terms (llama.cpp's HTTP
        // server after 5 requests, with `Connection: close`, which the pool honours; or
        // when idle), and a request that meets a connection closed under it is sent once
        // more on another (`client::exchange`).
        Connections::KeepAlive => builder.pool_idle_timeout(Duration::from_secs(60)),
        Connections::NewPerRequest => builder.pool_max_idle_per_host(0),
    };
    let mut builder = builder
        // Never follow a redirect: it would lead to a host nobody checked. A 3xx is the
        // request's error (`HttpStatus(3xx)`), like any other non-success status.
        .redirect(reqwest::redirect::Policy::none())
        // Each request's wait for a new connection, timed apart from its TTFT.
        .connector_layer(crate::loadgen::phases::TimeConnects);
    if let Some(pin) = &target.pin {
        // Connect to the addresses that were checked, directly: no second look-up, no proxy.
        builder = builder.no_proxy().resolve_to_addrs(&pin.host, &pin.addrs);
    }
    let client = builder.build().map_err(|e| LoadgenError::Client(e.to_string()))?;
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
        client,
        url: target.url(),
        models_url: target.models_url(),
        keep_alive,
        auth,
        key: target.api_key.clone(),
        timeout,
        keep_reply: false,
        sim_clock: false,
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
    let body = serde_json::json!({ "in_flight": in_flight, "requests": requests });
    let answer = endpoint
        .client
        .post(&url)
        .json(&body)
        .send()
        .await
        .map_err(|e| LoadgenError::Client(format!("announcing a level to the simulator: {e}")))?;
    if !answer.status().is_success() {
        return Err(LoadgenError::InvalidSpec(format!(
            "the sweep runs on the simulator's clock, but {url} answered {} (is it `plateau sim --clock model`?)",
            answer.status()
        )));
    }
    Ok(())
}
