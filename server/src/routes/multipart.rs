//! Reads a `multipart/form-data` import (the upload form and `POST /api/v1/runs` share
//! it): any number of `file` parts and/or a `text` part, plus the run's facts as text fields.

use crate::ingest::form::{ImportFields, Validate};
use crate::ingest::{ImportError, ImportRequest, InputFile};
use axum::extract::Multipart;

fn transport(e: axum::extract::multipart::MultipartError, limit: usize) -> ImportError {
    let text = e.body_text();
    if text.contains("length limit") || e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        ImportError::Field { field: "file", message: format!("the upload is over the limit of {limit} bytes") }
    } else {
        ImportError::Field { field: "file", message: format!("the upload could not be read: {text}") }
    }
}

/// The fields and files of a multipart body. Empty file parts (a form submitted without
/// a file) are dropped; pasted text counts as one more file.
pub async fn read_parts(mut mp: Multipart, limit: usize) -> Result<(ImportFields, Vec<InputFile>), ImportError> {
    let mut fields = ImportFields::default();
    let mut files = Vec::new();
    let mut text = String::new();
    while let Some(field) = mp.next_field().await.map_err(|e| transport(e, limit))? {
        let name = field.name().unwrap_or_default().to_owned();
        match name.as_str() {
            "file" => {
                let file_name = field.file_name().filter(|n| !n.is_empty()).map(str::to_owned);
                let bytes = field.bytes().await.map_err(|e| transport(e, limit))?;
                if !bytes.is_empty() || file_name.is_some() {
                    files.push(InputFile { file_name, content: bytes.to_vec() });
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
    if !text.trim().is_empty() {
        files.push(InputFile { file_name: None, content: text.into_bytes() });
    }
    if files.is_empty() {
        return Err(ImportError::NoInput);
    }
    Ok((fields, files))
}

/// The whole import request of a multipart body.
pub async fn read_import(mp: Multipart, limit: usize) -> Result<ImportRequest, ImportError> {
    let (fields, files) = read_parts(mp, limit).await?;
    fields.into_request(files)
}
