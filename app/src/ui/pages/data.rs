//! How a page's data travels: the one resource constructor every page uses, and the codec
//! it hydrates with.
//!
//! A page's data reaches the browser twice over: in the HTML for hydration (a resource's
//! codec) and from its server function on navigation (server_fn's JSON body). Leptos's
//! default resource codec reads JSON from a `&str` while server_fn reads it from bytes, and
//! serde compiles a page type's whole decoder once per reader: two copies of every
//! decoder in the wasm. [`PageJson`] reads the hydration data as bytes too, so both paths
//! share one decoder per type.

use leptos::prelude::*;
use leptos::server::codee::{Decoder, Encoder};
use serde::{de::DeserializeOwned, Serialize};
use std::future::Future;

/// JSON, read from bytes as server_fn reads its responses (see the module comment).
pub(crate) struct PageJson;

impl<T: Serialize> Encoder<T> for PageJson {
    type Error = serde_json::Error;
    type Encoded = String;

    fn encode(val: &T) -> Result<String, serde_json::Error> {
        serde_json::to_string(val)
    }
}

impl<T: DeserializeOwned> Decoder<T> for PageJson {
    type Error = serde_json::Error;
    type Encoded = str;

    fn decode(val: &str) -> Result<T, serde_json::Error> {
        serde_json::from_slice(val.as_bytes())
    }
}

/// A page's data: `Resource::new` with [`PageJson`] as its codec.
#[track_caller]
pub(crate) fn page_resource<S, T, Fut>(
    source: impl Fn() -> S + Send + Sync + 'static,
    fetcher: impl Fn(S) -> Fut + Send + Sync + 'static,
) -> Resource<T, PageJson>
where
    S: Send + Sync + Clone + PartialEq + 'static,
    T: Serialize + DeserializeOwned + Send + Sync + 'static,
    Fut: Future<Output = T> + Send + 'static,
{
    Resource::new_with_options(source, fetcher, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_codec_round_trips_what_the_default_codec_does() {
        let value: Result<Option<Vec<(String, f64)>>, String> = Ok(Some(vec![("a \"b\" é".into(), 0.1 + 0.2)]));
        let encoded = <PageJson as Encoder<_>>::encode(&value).unwrap();
        assert_eq!(encoded, serde_json::to_string(&value).unwrap());
        let back: Result<Option<Vec<(String, f64)>>, String> = <PageJson as Decoder<_>>::decode(&encoded).unwrap();
        assert_eq!(back, value);
        assert!(<PageJson as Decoder<Vec<u8>>>::decode("[1,").is_err());
    }
}
