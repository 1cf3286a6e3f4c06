//! Reads a `multipart/form-data` import (the upload form and `POST /api/v1/runs` share
//! it): a `file` part and/or a `text` part, plus the run's facts as text fields.

use crate::ingest::form::ImportFields;
use crate::ingest::{ImportError, ImportRequest};
use axum::extract::Multipart;

fn transport(e: axum::extract::multipart::MultipartError, limit: usize) -> ImportError {
    let text = e.body_text();
    if text.contains("length limit") || e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        ImportError::Field { field: "file", message: format!("the upload is over the limit of {limit} bytes") }
    } else {
        ImportError::Field { field: "file", message: format!("the upload could not be read: {text}") }
    }
}

/// Collects the parts into an import request. A non-empty file wins over pasted text.
pub async fn read_import(mut mp: Multipart, limit: usize) -> Result<ImportRequest, ImportError> {
    let mut fields = ImportFields::default();
    let mut file: Option<(Option<String>, Vec<u8>)> = None;
    let mut text = String::new();
    while let Some(field) = mp.next_field().await.map_err(|e| transport(e, limit))? {
        let name = field.name().unwrap_or_default().to_owned();
        match name.as_str() {
            "file" => {
                let file_name = field.file_name().filter(|n| !n.is_empty()).map(str::to_owned);
                let bytes = field.bytes().await.map_err(|e| transport(e, limit))?;
                if !bytes.is_empty() || file_name.is_some() {
                    file = Some((file_name, bytes.to_vec()));
                }
            }
            "text" => text = field.text().await.map_err(|e| transport(e, limit))?,
            _ => {
                let value = field.text().await.map_err(|e| transport(e, limit))?;
                // Unknown fields are ignored, so newer clients keep working with older servers.
                let _ = fields.set(&name, value);
            }
        }
    }
    match file {
        Some((file_name, bytes)) if !bytes.is_empty() || text.trim().is_empty() => {
            fields.into_request(file_name, bytes)
        }
        _ if !text.trim().is_empty() => fields.into_request(None, text.into_bytes()),
        _ => Err(ImportError::NoInput),
    }
}
