//! How a sweep's synthetic prompts get their lengths before it starts ([`lengths_for`]):
//! the model's tokenizer, else a calibration from the server's `usage.prompt_tokens`
//! ([`calibrate`]: two requests, one token of output each), else one word per token.

use super::client::{self, Endpoint};
use super::prompt::Prompt;
use super::request::request_body;
use super::spec::SweepSpec;
use super::target::Target;
use super::tokens::{Calibration, Lengths};
use super::words::WORDS;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::sync::Arc;
use std::time::Instant;

/// Sends the calibration's two requests to the target (one token of output each, not
/// counted anywhere): a one-word prompt, then every word of [`WORDS`] once in an order
/// drawn from `seed` (so the fit is the vocabulary's mean, which is what uniform draws
/// average to). Fails when a request fails or the server reports no usage.
pub async fn calibrate(endpoint: &Endpoint, target: &Target, seed: u64) -> Result<Calibration, String> {
    let mut rng = StdRng::seed_from_u64(seed ^ CALIBRATION_SALT);
    let mut rest: Vec<&str> = WORDS.iter().copied().filter(|w| *w != "the").collect();
    rest.shuffle(&mut rng);
    let many = std::iter::once("the").chain(rest.iter().copied()).collect::<Vec<_>>();
    let one = server_count(endpoint, target, "the").await?;
    let all = server_count(endpoint, target, &many.join(" ")).await?;
    Calibration::fit(one, all, many.len())
}

/// Longest the two calibration requests may take together.
const CALIBRATION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// Seeds the calibration's word order apart from the prompts'.
const CALIBRATION_SALT: u64 = 0xca11_b4a7_e000_0001;

/// The server's `usage.prompt_tokens` for `text`.
async fn server_count(endpoint: &Endpoint, target: &Target, text: &str) -> Result<u64, String> {
    let mut body = request_body(target, Prompt::Text(text.to_owned()));
    if let Some(b) = body.as_object_mut() {
        b.insert("max_tokens".into(), serde_json::json!(1));
        b.remove("ignore_eos");
    }
    let sample = client::send(endpoint, &body, Instant::now(), None).await;
    if let Some(e) = &sample.error {
        return Err(format!("the calibration request failed ({})", e.message));
    }
    sample.prompt_tokens.filter(|n| *n > 0).ok_or_else(|| "the server reported no usage.prompt_tokens".to_owned())
}

/// How the sweep's synthetic prompts get their lengths: the spec's tokenizer, else a
/// calibration against the target, else words (the reason logged and recorded). A
/// prompt file's lengths are its own: nothing is sent for it.
pub async fn lengths_for(spec: &SweepSpec, endpoint: &Endpoint) -> Lengths {
    if let Some(t) = &spec.prompt.tokenizer {
        return Lengths::Tokenizer(Arc::clone(t));
    }
    if spec.prompt.file.is_some() {
        return Lengths::Words { reason: "prompts from a file".into() };
    }
    // Two one-token answers; a server that hangs does not hold the sweep for long.
    let limit = spec.request_timeout.min(CALIBRATION_TIMEOUT);
    let calibrated = tokio::time::timeout(limit, calibrate(endpoint, &spec.target, spec.prompt.seed))
        .await
        .unwrap_or_else(|_| Err(format!("the calibration requests took longer than {} s", limit.as_secs())));
    match calibrated {
        Ok(c) => {
            tracing::info!(
                tokens_per_word = c.tokens_per_word,
                overhead = c.overhead_tokens,
                "prompt lengths calibrated"
            );
            Lengths::Calibrated(c)
        }
        Err(reason) => {
            tracing::warn!(%reason, "prompt lengths not calibrated: one word per token");
            Lengths::Words { reason }
        }
    }
}
