//! Reads a `multipart/form-data` import (the upload form and `POST /api/v1/runs` share
//! it): any number of `file` parts and/or a `text` part, plus the run's facts as text fields.
//! Each part is read chunk by chunk and refused as soon as it passes the size limit, so an
//! over-size upload costs at most the limit in memory and gets `413`.

use crate::ingest::form::{ImportFields, Validate};
use crate::ingest::{self, ImportError, ImportRequest, InputFile};
use axum::extract::multipart::{Field, MultipartError};
use axum::extract::Multipart;

/// Form fields other than files and pasted text are short.
const MAX_FIELD_BYTES: usize = 64 * 1024;

pub(super) fn transport(e: MultipartError, limit: usize) -> ImportError {
    let text = e.body_text();
    if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE || text.contains("length limit") {
        ImportError::UploadTooLarge { limit }
    } else {
        ImportError::Field { field: "file", message: format!("the upload could not be read: {text}") }
    }
}

/// One part's bytes, refused once they pass `max` (`name` is what the message calls it).
pub(super) async fn read_capped(
    field: &mut Field<'_>,
    name: &str,
    max: usize,
    limit: usize,
) -> Result<Vec<u8>, ImportError> {
    let mut buf = Vec::new();
    while let Some(chunk) = field.chunk().await.map_err(|e| transport(e, limit))? {
        if buf.len().saturating_add(chunk.len()) > max {
            return Err(ImportError::OverLimit { file: name.to_owned(), limit: max });
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(buf)
}

/// The fields and files of a multipart body. Empty file parts (a form submitted without
/// a file) are dropped; pasted text counts as one more file.
pub async fn read_parts(mut mp: Multipart, limit: usize) -> Result<(ImportFields, Vec<InputFile>), ImportError> {
    let mut fields = ImportFields::default();
    let mut files = Vec::new();
    let mut text = Vec::new();
    while let Some(mut field) = mp.next_field().await.map_err(|e| transport(e, limit))? {
        let name = field.name().unwrap_or_default().to_owned();
        match name.as_str() {
            "file" => {
                if files.len() >= ingest::MAX_FILES {
                    return Err(ImportError::TooManyFiles { files: files.len() + 1, limit: ingest::MAX_FILES });
                }
                let file_name = field.file_name().filter(|n| !n.is_empty()).map(str::to_owned);
                let shown =
                    file_name.as_deref().map_or_else(|| "file".to_owned(), |n| ingest::printable(n).into_owned());
                let bytes = read_capped(&mut field, &shown, limit, limit).await?;
                if !bytes.is_empty() || file_name.is_some() {
                    files.push(InputFile { file_name, content: bytes });
                }
            }
            "text" => text = read_capped(&mut field, "pasted text", limit, limit).await?,
            _ => {
                let value =
                    read_capped(&mut field, &format!("field `{}`", ingest::printable(&name)), MAX_FIELD_BYTES, limit)
                        .await?;
                // Unknown fields are ignored, so newer clients keep working with older servers.
                let _ = fields.set(&name, String::from_utf8_lossy(&value).into_owned());
            }
        }
    }
    if !text.iter().all(u8::is_ascii_whitespace) {
        files.push(InputFile { file_name: None, content: text });
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
