//! Where the browser assets come from: the binary itself (the site embedded at build time
//! by `plateau_embed`, what a team runs) or a folder (`--site-root`: development, or a site
//! built apart). Both serve `/pkg/*` precompressed and `/favicon.ico`, and give the offline
//! report its stylesheet and chart code; caching rules are `routes::assets`'.

use axum::body::Body;
use axum::extract::{Path as UrlPath, Request};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use std::borrow::Cow;
use std::path::PathBuf;
use tower::ServiceExt;
use tower_http::services::{ServeDir, ServeFile};

/// The folder given to Leptos when the site is embedded: its fallback serves files from
/// the site root, and under `/dev/null` there is never a file to serve (nor a cwd to leak).
const NO_FOLDER: &str = "/dev/null/plateau-site-is-embedded";

/// Where the site is read from.
#[derive(Clone, Debug, PartialEq)]
pub enum Site {
    /// In the binary.
    Embedded,
    /// A built site folder (`target/site` from `.ci/build`).
    Dir(PathBuf),
}

impl Site {
    /// `--site-root` when given; else the site in the binary; else (a binary built before
    /// the site, as `cargo build` alone makes) `target/site` if it is there.
    pub fn choose(site_root: Option<PathBuf>) -> Site {
        match site_root {
            Some(dir) => Site::Dir(dir),
            None if plateau_embed::build_id().is_some() => Site::Embedded,
            None => Site::Dir(PathBuf::from("target/site")),
        }
    }

    /// The build's output name (`plateau-<12 hex>`) that pages name their assets by, or
    /// `plateau` for a folder built without one.
    pub fn output_name(&self) -> String {
        match self {
            Site::Embedded => plateau_embed::build_id(),
            Site::Dir(dir) => std::fs::read_to_string(dir.join("pkg").join("build-id")).ok(),
        }
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        .unwrap_or_else(|| "plateau".to_owned())
    }

    /// Whether there is a built site to serve (pages without it lack styles and charts).
    pub fn is_built(&self) -> bool {
        match self {
            Site::Embedded => plateau_embed::build_id().is_some(),
            Site::Dir(dir) => dir.join("pkg").exists(),
        }
    }

    /// The folder Leptos is told about (see [`NO_FOLDER`]).
    pub fn leptos_root(&self) -> String {
        match self {
            Site::Embedded => NO_FOLDER.to_owned(),
            Site::Dir(dir) => dir.to_string_lossy().into_owned(),
        }
    }

    /// For the log: "in the binary (plateau-…)" or the folder.
    pub fn describe(&self) -> String {
        match self {
            Site::Embedded => format!("in the binary ({})", self.output_name()),
            Site::Dir(dir) => format!("from {}", dir.display()),
        }
    }

    /// A browser asset as text, by its suffix after the output name (`.css`,
    /// `.echarts.js`, `.charts.js`); a folder built without hashed names has the originals.
    pub fn asset_text(&self, suffix: &str) -> Option<String> {
        let hashed = format!("pkg/{}{suffix}", self.output_name());
        let bytes: Cow<'static, [u8]> = match self {
            Site::Embedded => plateau_embed::get(&hashed)?.data,
            Site::Dir(dir) => {
                let original = match suffix {
                    ".echarts.js" => "echarts.min.js",
                    ".charts.js" => "charts.js",
                    ".css" => "pkg/plateau.css",
                    _ => return None,
                };
                let read = |rel: &str| std::fs::read(dir.join(rel)).ok();
                Cow::Owned(read(&hashed).or_else(|| read(original))?)
            }
        };
        String::from_utf8(bytes.into_owned()).ok()
    }

    /// `/pkg/*` and `/favicon.ico`.
    pub fn router<S: Clone + Send + Sync + 'static>(&self) -> Router<S> {
        match self {
            Site::Embedded => Router::new()
                .route(
                    "/pkg/{*path}",
                    get(|UrlPath(p): UrlPath<String>, h: HeaderMap| async move { embedded(&format!("pkg/{p}"), &h) }),
                )
                .route("/favicon.ico", get(|h: HeaderMap| async move { embedded("favicon.ico", &h) })),
            Site::Dir(dir) => {
                let files = ServeDir::new(dir.join("pkg")).precompressed_br().precompressed_gzip();
                let icon = ServeFile::new(dir.join("favicon.ico"));
                Router::new().nest_service("/pkg", files).route_service(
                    "/favicon.ico",
                    get(move |req: Request| async move {
                        icon.oneshot(req).await.map_or_else(|e| match e {}, IntoResponse::into_response)
                    }),
                )
            }
        }
    }
}

/// An embedded file, Brotli- or gzip-encoded when the browser accepts it and a copy exists,
/// with its SHA-256 as the ETag (a revalidation of an unchanged file is a `304`).
fn embedded(path: &str, headers: &HeaderMap) -> Response {
    if path.split('/').any(|part| part.is_empty() || part == "." || part == "..") {
        return StatusCode::NOT_FOUND.into_response();
    }
    let accepts = |coding: &str| {
        headers.get_all(header::ACCEPT_ENCODING).iter().filter_map(|v| v.to_str().ok()).any(|v| {
            v.split(',').any(|c| {
                let mut parts = c.split(';').map(str::trim);
                parts.next().is_some_and(|name| name.eq_ignore_ascii_case(coding))
                    && !parts.any(|q| q.replace(' ', "") == "q=0")
            })
        })
    };
    let (file, encoding) = [("br", ".br"), ("gzip", ".gz")]
        .iter()
        .filter(|(coding, _)| accepts(coding))
        .find_map(|(coding, ext)| plateau_embed::get(&format!("{path}{ext}")).map(|f| (f, Some(*coding))))
        .or_else(|| plateau_embed::get(path).map(|f| (f, None)))
        .map_or((None, None), |(f, e)| (Some(f), e));
    let Some(file) = file else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let etag = format!("\"{}\"", file.sha256[..16].iter().map(|b| format!("{b:02x}")).collect::<String>());
    let mime = mime_guess::from_path(path).first_or_octet_stream();
    let mut res = if headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"))
    {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        Response::new(Body::from(file.data))
    };
    let h = res.headers_mut();
    if let Ok(v) = HeaderValue::from_str(mime.essence_str()) {
        h.insert(header::CONTENT_TYPE, v);
    }
    if let Some(e) = encoding {
        h.insert(header::CONTENT_ENCODING, HeaderValue::from_static(e));
    }
    h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    res
}
