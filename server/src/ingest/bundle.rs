//! Folders and archives: a `.zip`, `.tar.gz`/`.tgz` or `.tar` among the uploaded files is
//! opened in memory into its member files, named `<archive stem>/<path inside>`, and every
//! path of a folder upload (`dir/sub/file.json`) is checked the same way. Nothing is ever
//! written to disk, so a path cannot escape anywhere; a path that tries (`..`, absolute, a
//! drive) is still refused, as are links and special files, since no honest result folder
//! holds one.
//!
//! Bounds hold for the whole import, counted as the archive is read (the sizes an archive
//! declares can lie): total bytes once uncompressed, files, nesting depth, path length,
//! and compression ratio (a zip bomb expands thousands of times; results compress ten to
//! fifty). Each refusal names the bound it crossed.

use super::{ImportError, InputFile};
use std::cell::Cell;
use std::io::Read;
use std::rc::Rc;

/// The bounds of one import's folders and archives.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    /// All files together, uncompressed.
    pub max_total_bytes: usize,
    /// Files (directories not counted).
    pub max_files: usize,
    /// Entries of one archive of any kind: files, folders, and a tar's long-name and PAX
    /// headers. A folder costs no bytes of content but still takes reading: an archive of
    /// millions of folder headers is refused at this count, not after minutes.
    pub max_entries: usize,
    /// Folders a path may go down.
    pub max_depth: usize,
    /// Bytes of one path.
    pub max_path_bytes: usize,
    /// Uncompressed bytes per compressed byte, checked once an archive has expanded past
    /// [`RATIO_FLOOR`] bytes (a small file of zeros may legitimately compress very well).
    pub max_ratio: u64,
}

/// The default bounds.
pub const BOUNDS: Bounds = Bounds {
    max_total_bytes: 256 * 1024 * 1024,
    max_files: super::MAX_FILES,
    max_entries: 10 * super::MAX_FILES,
    max_depth: 16,
    max_path_bytes: 1024,
    max_ratio: 200,
};

/// Below this many uncompressed bytes the ratio is not judged.
pub const RATIO_FLOOR: u64 = 1024 * 1024;

/// Bytes of a tar's PAX extended header (`x`, `g`): a path and a few times, a few hundred
/// bytes in practice. A larger one is refused before it is read.
pub const MAX_PAX_BYTES: u64 = 64 * 1024;

/// Characters of a refused path quoted in an error: enough to find it, never the whole of
/// a hostile name.
pub const MAX_QUOTED_CHARS: usize = 120;

/// A path as an error quotes it: printable, and at most [`MAX_QUOTED_CHARS`] characters
/// (then "…").
pub fn quoted(raw: &str) -> String {
    let p = super::printable(raw);
    match p.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((cut, _)) => format!("{}…", &p[..cut]),
        None => p.into_owned(),
    }
}

/// What kind of archive a file is, by its first bytes (never its name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Archive {
    Zip,
    Gzip,
    Tar,
}

impl Archive {
    pub fn of(content: &[u8]) -> Option<Self> {
        if content.starts_with(b"PK\x03\x04") || content.starts_with(b"PK\x05\x06") {
            Some(Archive::Zip)
        } else if content.starts_with(&[0x1f, 0x8b]) {
            Some(Archive::Gzip)
        } else if content.get(257..262) == Some(b"ustar") {
            Some(Archive::Tar)
        } else {
            None
        }
    }
}

/// True for a file that came from a folder or an archive (its name holds a folder).
pub fn in_folder(f: &InputFile) -> bool {
    f.file_name.as_deref().is_some_and(|n| n.contains('/'))
}

/// The folder a file's path is in (`""` at the top).
pub fn folder_of(name: &str) -> &str {
    name.rsplit_once('/').map_or("", |(d, _)| d)
}

/// The last part of a path.
pub fn base_name(name: &str) -> &str {
    name.rsplit_once('/').map_or(name, |(_, b)| b)
}

/// Opens every archive among `files` into its members and checks every path against
/// `bounds`; each file stays at most `max_file_bytes`. Files come back in path order, with
/// numbers compared as numbers (`run=2` before `run=10`): the order of a sweep's repeats.
pub fn expand(files: Vec<InputFile>, max_file_bytes: usize, bounds: &Bounds) -> Result<Vec<InputFile>, ImportError> {
    let mut out: Vec<InputFile> = Vec::new();
    let mut total = 0usize;
    let mut opened = false;
    for f in files {
        match Archive::of(&f.content) {
            Some(kind) => {
                opened = true;
                let name = f.display_name();
                let stem = stem_of(f.file_name.as_deref().unwrap_or("archive"));
                let before = out.len();
                let mut sink = Sink { out: &mut out, total: &mut total, bounds, archive: &name, stem: &stem };
                match kind {
                    Archive::Zip => read_zip(&f.content, max_file_bytes, &mut sink)?,
                    Archive::Gzip => {
                        let counter = Rc::new(Cell::new(0u64));
                        let counted = Counted { inner: f.content.as_slice(), read: Rc::clone(&counter) };
                        read_tar(flate2::read::MultiGzDecoder::new(counted), Some(counter), max_file_bytes, &mut sink)?;
                    }
                    Archive::Tar => read_tar(f.content.as_slice(), None, max_file_bytes, &mut sink)?,
                }
                // An archive of nothing (or of folders only) imports nothing: said, not a 201
                // with no run.
                if out.len() == before {
                    return Err(ImportError::Bundle {
                        file: name,
                        message: "the archive holds no file".to_owned(),
                        too_large: false,
                    });
                }
            }
            None => {
                if let Some(n) = f.file_name.as_deref().filter(|n| n.contains('/') || n.contains('\\')) {
                    let path = check_path(n, bounds).map_err(|problem| ImportError::Bundle {
                        file: quoted(n),
                        message: problem.message(bounds),
                        too_large: problem.is_bound(),
                    })?;
                    total = add_total(total, f.content.len(), bounds, &f.display_name())?;
                    out.push(InputFile { file_name: Some(path), content: f.content });
                } else {
                    total = add_total(total, f.content.len(), bounds, &f.display_name())?;
                    out.push(f);
                }
                if out.len() > bounds.max_files {
                    return Err(too_many(out.len(), bounds, "the import"));
                }
            }
        }
    }
    if opened || out.iter().any(in_folder) {
        out.sort_by(|a, b| natural_cmp(a.file_name.as_deref().unwrap_or(""), b.file_name.as_deref().unwrap_or("")));
    }
    Ok(out)
}

fn too_many(files: usize, bounds: &Bounds, what: &str) -> ImportError {
    ImportError::Bundle {
        file: what.to_owned(),
        message: format!("{files} files or more, over the limit of {} files per import", bounds.max_files),
        too_large: true,
    }
}

fn add_total(total: usize, more: usize, bounds: &Bounds, file: &str) -> Result<usize, ImportError> {
    let t = total.saturating_add(more);
    if t > bounds.max_total_bytes {
        return Err(ImportError::Bundle {
            file: file.to_owned(),
            message: format!(
                "the files add up to more than {} bytes uncompressed, over the limit of {} bytes per import",
                bounds.max_total_bytes, bounds.max_total_bytes
            ),
            too_large: true,
        });
    }
    Ok(t)
}

/// `sweep.tar.gz` → `sweep`.
fn stem_of(name: &str) -> String {
    let base = base_name(&name.replace('\\', "/")).to_owned();
    let lower = base.to_ascii_lowercase();
    for ext in [".tar.gz", ".tgz", ".zip", ".tar", ".gz"] {
        if lower.ends_with(ext) && lower.len() > ext.len() {
            return base.get(..base.len() - ext.len()).unwrap_or(&base).to_owned();
        }
    }
    base
}

/// Why a path was refused.
#[derive(Debug, PartialEq)]
enum PathProblem {
    Absolute,
    Parent,
    Control,
    TooLong(usize),
    TooDeep(usize),
}

impl PathProblem {
    fn is_bound(&self) -> bool {
        matches!(self, PathProblem::TooLong(_) | PathProblem::TooDeep(_))
    }

    fn message(&self, bounds: &Bounds) -> String {
        match self {
            PathProblem::Absolute => "the path is absolute: a path must stay inside its folder or archive".into(),
            PathProblem::Parent => "the path goes up (`..`): a path must stay inside its folder or archive".into(),
            PathProblem::Control => "the path holds a control character".into(),
            PathProblem::TooLong(n) => {
                format!("the path is {n} bytes, over the limit of {} bytes", bounds.max_path_bytes)
            }
            PathProblem::TooDeep(n) => {
                format!("the path is {n} folders deep, over the limit of {} folders", bounds.max_depth)
            }
        }
    }
}

/// A member's path made plain (`/`-separated, no `.` parts), or why it is refused.
fn check_path(raw: &str, bounds: &Bounds) -> Result<String, PathProblem> {
    if raw.len() > bounds.max_path_bytes {
        return Err(PathProblem::TooLong(raw.len()));
    }
    if raw.chars().any(char::is_control) {
        return Err(PathProblem::Control);
    }
    let unified = raw.replace('\\', "/");
    let bytes = unified.as_bytes();
    if unified.starts_with('/') || (bytes.len() >= 2 && bytes.get(1) == Some(&b':')) {
        return Err(PathProblem::Absolute);
    }
    let mut parts = Vec::new();
    for part in unified.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(PathProblem::Parent),
            p => parts.push(p),
        }
    }
    if parts.len() > bounds.max_depth + 1 {
        return Err(PathProblem::TooDeep(parts.len() - 1));
    }
    Ok(parts.join("/"))
}

/// Where an archive's members go, with the running totals.
struct Sink<'a> {
    out: &'a mut Vec<InputFile>,
    total: &'a mut usize,
    bounds: &'a Bounds,
    archive: &'a str,
    stem: &'a str,
}

impl Sink<'_> {
    fn refuse(&self, message: String, too_large: bool) -> ImportError {
        ImportError::Bundle { file: self.archive.to_owned(), message, too_large }
    }

    fn member_path(&self, raw: &str) -> Result<String, ImportError> {
        let shown = quoted(raw);
        let path = check_path(raw, self.bounds)
            .map_err(|p| self.refuse(format!("`{shown}`: {}", p.message(self.bounds)), p.is_bound()))?;
        Ok(format!("{}/{path}", self.stem))
    }

    /// The `n`th entry (from 0) of this archive, of any kind, against `max_entries`.
    fn count_entry(&self, n: usize) -> Result<(), ImportError> {
        if n >= self.bounds.max_entries {
            return Err(self.refuse(
                format!(
                    "more than {} entries (files, folders and headers), over the limit of {} entries per archive",
                    self.bounds.max_entries, self.bounds.max_entries
                ),
                true,
            ));
        }
        Ok(())
    }

    fn count_one(&self) -> Result<(), ImportError> {
        if self.out.len() >= self.bounds.max_files {
            return Err(too_many(self.out.len() + 1, self.bounds, self.archive));
        }
        Ok(())
    }

    /// Reads one member (at most `max_file_bytes`) and keeps it.
    fn keep(&mut self, path: String, reader: &mut dyn Read, max_file_bytes: usize) -> Result<u64, ImportError> {
        let mut content = Vec::new();
        let limit = max_file_bytes as u64 + 1;
        reader
            .take(limit)
            .read_to_end(&mut content)
            .map_err(|e| self.refuse(format!("`{}` cannot be read: {e}", quoted(&path)), false))?;
        if content.len() > max_file_bytes {
            return Err(ImportError::TooLarge {
                file: format!("{} (in {})", super::printable(&path), self.archive),
                size: content.len(),
                limit: max_file_bytes,
            });
        }
        let n = content.len();
        *self.total = add_total(*self.total, n, self.bounds, self.archive)?;
        self.out.push(InputFile { file_name: Some(path), content });
        Ok(n as u64)
    }

    fn check_ratio(&self, what: &str, uncompressed: u64, compressed: u64) -> Result<(), ImportError> {
        if uncompressed > RATIO_FLOOR && uncompressed / compressed.max(1) > self.bounds.max_ratio {
            return Err(self.refuse(
                format!(
                    "{what} expands {} times its compressed size, over the limit of {} times (a zip bomb?)",
                    uncompressed / compressed.max(1),
                    self.bounds.max_ratio
                ),
                true,
            ));
        }
        Ok(())
    }
}

fn read_zip(content: &[u8], max_file_bytes: usize, sink: &mut Sink<'_>) -> Result<(), ImportError> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(content))
        .map_err(|e| sink.refuse(format!("not a readable zip archive: {e}"), false))?;
    // The central directory says how many entries there are: a 10,000-file archive is
    // refused before any is read.
    sink.count_entry(zip.len().saturating_sub(1))?;
    let room = sink.bounds.max_files.saturating_sub(sink.out.len());
    if zip.len() > room {
        let dirs = (0..zip.len())
            .filter(|i| zip.name_for_index(*i).is_some_and(|n| n.is_ok_and(|n| n.ends_with('/'))))
            .count();
        if zip.len() - dirs > room {
            return Err(too_many(sink.out.len() + zip.len() - dirs, sink.bounds, sink.archive));
        }
    }
    for i in 0..zip.len() {
        let mut entry =
            zip.by_index(i).map_err(|e| sink.refuse(format!("entry {} cannot be read: {e}", i + 1), false))?;
        let raw = entry
            .name()
            .map_err(|e| sink.refuse(format!("entry {} has no readable name: {e}", i + 1), false))?
            .into_owned();
        let path = sink.member_path(&raw)?;
        if entry.is_dir() {
            continue;
        }
        if entry.is_symlink() || !entry.is_file() {
            return Err(sink.refuse(
                format!("`{}` is a link or a special file: an import takes plain files only", quoted(&raw)),
                false,
            ));
        }
        sink.count_one()?;
        let compressed = entry.compressed_size();
        if entry.size() > max_file_bytes as u64 {
            return Err(ImportError::TooLarge {
                file: format!("{} (in {})", super::printable(&path), sink.archive),
                size: usize::try_from(entry.size()).unwrap_or(usize::MAX),
                limit: max_file_bytes,
            });
        }
        let n = sink.keep(path.clone(), &mut entry, max_file_bytes)?;
        sink.check_ratio(&format!("`{}`", super::printable(&path)), n, compressed)?;
    }
    Ok(())
}

/// A reader that counts the bytes taken from it (the compressed side of a `.tar.gz`).
struct Counted<R> {
    inner: R,
    read: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

/// Reads a tar stream entry by entry, raw: the `tar` crate would read a GNU long-name or
/// PAX header whole into memory before any bound, so those are read here, each bounded
/// before a byte of it is (a long name by the path bound, a PAX header by
/// [`MAX_PAX_BYTES`]). Every entry counts against `max_entries`, every entry's data is
/// bounded before the next header is sought (a folder with data, a link, a device are
/// refused on sight), and the ratio is judged on the whole uncompressed stream, headers
/// included, after every entry.
fn read_tar<R: Read>(
    reader: R,
    compressed: Option<Rc<Cell<u64>>>,
    max_file_bytes: usize,
    sink: &mut Sink<'_>,
) -> Result<(), ImportError> {
    use tar::EntryType;
    let stream = Rc::new(Cell::new(0u64));
    let mut archive = tar::Archive::new(Counted { inner: reader, read: Rc::clone(&stream) });
    let entries =
        archive.entries().map_err(|e| sink.refuse(format!("not a readable tar archive: {e}"), false))?.raw(true);
    // What the extension headers before an entry said of it.
    let mut long_name: Option<Vec<u8>> = None;
    let mut pax_path: Option<Vec<u8>> = None;
    let mut pax_size: Option<u64> = None;
    for (n, entry) in entries.enumerate() {
        sink.count_entry(n)?;
        let mut entry = entry.map_err(|e| sink.refuse(format!("not a readable tar archive: {e}"), false))?;
        let kind = entry.header().entry_type();
        let size = entry.header().entry_size().unwrap_or(u64::MAX);
        if kind.is_gnu_longname() || kind.is_gnu_longlink() {
            // The name and its NUL.
            let cap = sink.bounds.max_path_bytes as u64 + 1;
            if size > cap {
                return Err(sink.refuse(
                    format!(
                        "a long-name header of {size} bytes, over the limit of {} bytes for a path",
                        sink.bounds.max_path_bytes
                    ),
                    true,
                ));
            }
            let mut bytes = Vec::new();
            (&mut entry)
                .take(cap)
                .read_to_end(&mut bytes)
                .map_err(|e| sink.refuse(format!("not a readable tar archive: {e}"), false))?;
            while bytes.last() == Some(&0) {
                bytes.pop();
            }
            // A long link name says where a link points: links are refused when their entry
            // comes, so it is read (bounded) and forgotten.
            if kind.is_gnu_longname() {
                long_name = Some(bytes);
            }
        } else if kind.is_pax_local_extensions() || kind.is_pax_global_extensions() {
            if size > MAX_PAX_BYTES {
                return Err(
                    sink.refuse(format!("a PAX header of {size} bytes, over the limit of {MAX_PAX_BYTES} bytes"), true)
                );
            }
            let mut bytes = Vec::new();
            (&mut entry)
                .take(MAX_PAX_BYTES)
                .read_to_end(&mut bytes)
                .map_err(|e| sink.refuse(format!("not a readable tar archive: {e}"), false))?;
            // A global header's path would name every later member alike: none is taken.
            if kind.is_pax_local_extensions() {
                for ext in tar::PaxExtensions::new(&bytes) {
                    let ext = ext.map_err(|e| sink.refuse(format!("a PAX header is not readable: {e}"), false))?;
                    match ext.key_bytes() {
                        b"path" => pax_path = Some(ext.value_bytes().to_vec()),
                        b"size" => pax_size = ext.value().ok().and_then(|v| v.trim().parse().ok()).or(Some(u64::MAX)),
                        _ => {}
                    }
                }
            }
        } else {
            let raw_bytes =
                long_name.take().or_else(|| pax_path.take()).unwrap_or_else(|| entry.path_bytes().into_owned());
            pax_path = None;
            let raw = String::from_utf8_lossy(&raw_bytes).into_owned();
            // Raw entries are read at their header's size; a PAX size that says otherwise
            // would make two readers see two archives.
            if pax_size.take().is_some_and(|p| p != size) {
                return Err(sink.refuse(format!("`{}`: its PAX size disagrees with its header's", quoted(&raw)), false));
            }
            let path = sink.member_path(&raw)?;
            match kind {
                EntryType::Directory if size == 0 => {}
                EntryType::Regular | EntryType::Continuous => {
                    sink.count_one()?;
                    if size > max_file_bytes as u64 {
                        return Err(ImportError::TooLarge {
                            file: format!("{} (in {})", quoted(&path), sink.archive),
                            size: usize::try_from(size).unwrap_or(usize::MAX),
                            limit: max_file_bytes,
                        });
                    }
                    sink.keep(path, &mut entry, max_file_bytes)?;
                }
                _ => {
                    return Err(sink.refuse(
                        format!("`{}` is a link or a special file: an import takes plain files only", quoted(&raw)),
                        false,
                    ))
                }
            }
        }
        if let Some(c) = &compressed {
            sink.check_ratio("the archive", stream.get(), c.get())?;
        }
    }
    if long_name.is_some() || pax_path.is_some() {
        return Err(sink.refuse("a long-name or PAX header describes no member after it".to_owned(), false));
    }
    Ok(())
}

/// Every file under the folder `root` (the CLI's `plateau import DIR`), named
/// `<folder name>/<path inside>`, within `bounds` and `max_file_bytes` each. Links and
/// special files are refused, never followed. `Err` outside: the folder could not be read;
/// inside: a bound crossed or a link found, as an import error.
pub fn read_folder(
    root: &std::path::Path,
    max_file_bytes: usize,
    bounds: &Bounds,
) -> std::io::Result<Result<Vec<InputFile>, ImportError>> {
    let top =
        root.canonicalize()?.file_name().map_or_else(|| "folder".to_owned(), |n| n.to_string_lossy().into_owned());
    let mut out = Vec::new();
    let mut total = 0usize;
    // (folder on disk, its path in the import, depth)
    let mut stack = vec![(root.to_path_buf(), top.clone(), 0usize)];
    while let Some((dir, shown, depth)) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&dir)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = format!("{shown}/{}", e.file_name().to_string_lossy());
            let printable = quoted(&name);
            let kind = e.file_type()?;
            let refuse =
                |message: String, too_large: bool| ImportError::Bundle { file: top.clone(), message, too_large };
            if kind.is_symlink() || !(kind.is_dir() || kind.is_file()) {
                return Ok(Err(refuse(
                    format!("`{printable}` is a link or a special file: an import takes plain files only"),
                    false,
                )));
            }
            if let Err(p) = check_path(&name, bounds) {
                return Ok(Err(refuse(format!("`{printable}`: {}", p.message(bounds)), p.is_bound())));
            }
            if kind.is_dir() {
                if depth + 1 > bounds.max_depth {
                    let p = PathProblem::TooDeep(depth + 1);
                    return Ok(Err(refuse(format!("`{printable}`: {}", p.message(bounds)), true)));
                }
                stack.push((e.path(), name, depth + 1));
                continue;
            }
            if out.len() >= bounds.max_files {
                return Ok(Err(too_many(out.len() + 1, bounds, &top)));
            }
            let size = e.metadata()?.len();
            if size > max_file_bytes as u64 {
                let size = usize::try_from(size).unwrap_or(usize::MAX);
                return Ok(Err(ImportError::TooLarge { file: printable, size, limit: max_file_bytes }));
            }
            let mut content = Vec::new();
            std::fs::File::open(e.path())?.take(max_file_bytes as u64 + 1).read_to_end(&mut content)?;
            if content.len() > max_file_bytes {
                return Ok(Err(ImportError::OverLimit { file: printable, limit: max_file_bytes }));
            }
            total = match add_total(total, content.len(), bounds, &top) {
                Ok(t) => t,
                Err(err) => return Ok(Err(err)),
            };
            out.push(InputFile { file_name: Some(name), content });
        }
    }
    Ok(Ok(out))
}

/// Compares paths with runs of digits compared as numbers.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let mut digits = None;
        for (i, c) in s.char_indices() {
            let d = c.is_ascii_digit();
            if digits != Some(d) {
                if i > start {
                    out.push((digits.unwrap_or(false), s.get(start..i).unwrap_or("")));
                }
                start = i;
                digits = Some(d);
            }
        }
        if start < s.len() {
            out.push((digits.unwrap_or(false), s.get(start..).unwrap_or("")));
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for (x, y) in ca.iter().zip(cb.iter()) {
        let o = match (x, y) {
            ((true, p), (true, q)) => {
                let (p, q) = (p.trim_start_matches('0'), q.trim_start_matches('0'));
                p.len().cmp(&q.len()).then_with(|| p.cmp(q))
            }
            ((_, p), (_, q)) => p.cmp(q),
        };
        if o.is_ne() {
            return o;
        }
    }
    ca.len().cmp(&cb.len()).then_with(|| a.cmp(b))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    fn file(name: &str, content: &[u8]) -> InputFile {
        InputFile { file_name: Some(name.into()), content: content.to_vec() }
    }

    pub(crate) fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        for (name, content) in entries {
            w.start_file(*name, opts).unwrap();
            w.write_all(content).unwrap();
        }
        w.finish().unwrap().into_inner()
    }

    pub(crate) fn tar_gz_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        let mut t = tar::Builder::new(gz);
        for (name, content) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_size(content.len() as u64);
            h.set_mode(0o644);
            h.set_entry_type(tar::EntryType::Regular);
            if name.contains("..") {
                // `set_path` refuses `..`: write the raw name, as a hostile archive would.
                let raw = name.as_bytes();
                h.as_old_mut().name[..raw.len()].copy_from_slice(raw);
                h.set_cksum();
                t.append(&h, *content).unwrap();
            } else {
                t.append_data(&mut h, name, *content).unwrap();
            }
        }
        t.into_inner().unwrap().finish().unwrap()
    }

    #[test]
    fn archives_open_into_their_members_in_natural_order() {
        let z = zip_of(&[("res/a/run=10.json", b"{}"), ("res/a/run=2.json", b"[]"), ("res/", b"")]);
        let out = expand(vec![file("sweep.zip", &z)], 1 << 20, &BOUNDS).unwrap();
        let names: Vec<_> = out.iter().map(|f| f.file_name.clone().unwrap()).collect();
        assert_eq!(names, ["sweep/res/a/run=2.json", "sweep/res/a/run=10.json"]);
        assert_eq!(out[0].content, b"[]");
        let t = tar_gz_of(&[("x/c1.txt", b"one"), ("x/c2.txt", b"two")]);
        let out = expand(vec![file("b.tgz", &t)], 1 << 20, &BOUNDS).unwrap();
        assert_eq!(out[1].file_name.as_deref(), Some("b/x/c2.txt"));
        assert_eq!(out[1].content, b"two");
        assert_eq!(natural_cmp("run=2", "run=10"), std::cmp::Ordering::Less);
        assert_eq!(stem_of("dir\\Sweep.TAR.GZ"), "Sweep");
    }

    #[test]
    fn traversal_links_and_absolute_paths_are_refused() {
        let e = expand(vec![file("evil.zip", &zip_of(&[("../../etc/cron.d/x", b"x")]))], 1 << 20, &BOUNDS).unwrap_err();
        assert_eq!(
            e.to_string(),
            "evil.zip: `../../etc/cron.d/x`: the path goes up (`..`): a path must stay inside its folder or archive"
        );
        assert!(e.is_client_error() && !e.is_too_large());
        let e = expand(vec![file("evil.tar.gz", &tar_gz_of(&[("ok/../../x", b"x")]))], 1 << 20, &BOUNDS).unwrap_err();
        assert!(e.to_string().contains("the path goes up"), "{e}");
        let e = expand(vec![file("/abs/x.json", b"{}")], 1 << 20, &BOUNDS).unwrap_err();
        assert!(e.to_string().contains("the path is absolute"), "{e}");
        let e = expand(vec![file("C:\\x\\y.json", b"{}")], 1 << 20, &BOUNDS).unwrap_err();
        assert!(e.to_string().contains("the path is absolute"), "{e}");
        // A symlink in a tar.
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        let mut t = tar::Builder::new(gz);
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Symlink);
        h.set_size(0);
        t.append_link(&mut h, "d/link.json", "/etc/passwd").unwrap();
        let bytes = t.into_inner().unwrap().finish().unwrap();
        let e = expand(vec![file("l.tgz", &bytes)], 1 << 20, &BOUNDS).unwrap_err();
        assert_eq!(e.to_string(), "l.tgz: `d/link.json` is a link or a special file: an import takes plain files only");
    }

    /// A gzipped tar of raw `(header, data)` pairs, as a hostile writer would make them.
    fn raw_tar_gz(entries: Vec<(tar::Header, Vec<u8>)>) -> Vec<u8> {
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        let mut t = tar::Builder::new(gz);
        for (mut h, data) in entries {
            h.set_size(data.len() as u64);
            h.set_cksum();
            t.append(&h, data.as_slice()).unwrap();
        }
        t.into_inner().unwrap().finish().unwrap()
    }

    fn header(kind: tar::EntryType, name: &str) -> tar::Header {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_mode(0o644);
        let raw = name.as_bytes();
        h.as_old_mut().name[..raw.len()].copy_from_slice(raw);
        h
    }

    /// A PAX record: `"<len> key=value\n"`, its length counting itself.
    fn pax_record(key: &str, value: &str) -> Vec<u8> {
        let body = format!(" {key}={value}\n");
        let mut n = body.len() + 1;
        while format!("{n}{body}").len() != n {
            n += 1;
        }
        format!("{n}{body}").into_bytes()
    }

    #[test]
    fn tar_headers_are_bounded_before_they_are_read_and_names_quoted_short() {
        use tar::EntryType;
        let file = |name: &str| (header(EntryType::Regular, name), b"{}".to_vec());
        // A megabyte of GNU long name: refused by its declared size, the error short.
        let tgz =
            raw_tar_gz(vec![(header(EntryType::GNULongName, "././@LongLink"), vec![b'a'; 1 << 20]), file("x.json")]);
        let e = expand(vec![super::tests::file("long.tgz", &tgz)], 1 << 20, &BOUNDS).unwrap_err();
        assert_eq!(
            e.to_string(),
            "long.tgz: a long-name header of 1048576 bytes, over the limit of 1024 bytes for a path"
        );
        assert!(e.is_too_large());
        // A megabyte of PAX header, the same.
        let tgz = raw_tar_gz(vec![(header(EntryType::XHeader, "PaxHeaders/x"), vec![b'a'; 1 << 20]), file("x.json")]);
        let e = expand(vec![super::tests::file("pax.tgz", &tgz)], 1 << 20, &BOUNDS).unwrap_err();
        assert_eq!(e.to_string(), "pax.tgz: a PAX header of 1048576 bytes, over the limit of 65536 bytes");
        // A long name under the path bound, and a PAX path, name their members.
        let long = format!("res/{}/run.json", "d".repeat(300));
        let mut name = long.clone().into_bytes();
        name.push(0);
        let tgz = raw_tar_gz(vec![
            (header(EntryType::GNULongName, "././@LongLink"), name),
            file("cut"),
            (header(EntryType::XHeader, "PaxHeaders/p"), pax_record("path", "res/from-pax.json")),
            file("ignored"),
            (header(EntryType::Directory, "res/"), Vec::new()),
        ]);
        let out = expand(vec![super::tests::file("ok.tgz", &tgz)], 1 << 20, &BOUNDS).unwrap();
        let names: Vec<_> = out.iter().map(|f| f.file_name.clone().unwrap()).collect();
        assert_eq!(names, [format!("ok/{long}"), "ok/res/from-pax.json".to_owned()]);
        // A long name up to the path bound is kept whole; a zip name over it is quoted short.
        let over = "x".repeat(1000);
        let tgz =
            raw_tar_gz(vec![(header(EntryType::GNULongName, "././@LongLink"), over.clone().into_bytes()), file("x")]);
        let out = expand(vec![super::tests::file("q.tgz", &tgz)], 1 << 20, &BOUNDS).unwrap();
        assert_eq!(out[0].file_name.as_deref(), Some(format!("q/{over}").as_str()), "1,000 bytes fit");
        let zip = zip_of(&[(&"y".repeat(5000), b"{}")]);
        let e = expand(vec![super::tests::file("z.zip", &zip)], 1 << 20, &BOUNDS).unwrap_err();
        let msg = e.to_string();
        assert!(msg.len() < 300 && msg.contains(&format!("`{}…`", "y".repeat(MAX_QUOTED_CHARS))), "{msg}");
        assert!(msg.ends_with("the path is 5000 bytes, over the limit of 1024 bytes"), "{msg}");
        // A PAX size the header does not agree with.
        let tgz =
            raw_tar_gz(vec![(header(EntryType::XHeader, "PaxHeaders/s"), pax_record("size", "999")), file("s.json")]);
        let e = expand(vec![super::tests::file("s.tgz", &tgz)], 1 << 20, &BOUNDS).unwrap_err();
        assert_eq!(e.to_string(), "s.tgz: `s.json`: its PAX size disagrees with its header's");
        // A header that describes nothing after it.
        let tgz = raw_tar_gz(vec![(header(EntryType::GNULongName, "././@LongLink"), b"a.json".to_vec())]);
        let e = expand(vec![super::tests::file("end.tgz", &tgz)], 1 << 20, &BOUNDS).unwrap_err();
        assert!(e.to_string().contains("describes no member after it"), "{e}");
    }

    #[test]
    fn an_archive_of_nothing_is_refused() {
        for (name, bytes) in
            [("empty.zip", zip_of(&[])), ("dirs.zip", zip_of(&[("a/", b"")])), ("empty.tgz", tar_gz_of(&[]))]
        {
            let e = expand(vec![file(name, &bytes)], 1 << 20, &BOUNDS).unwrap_err();
            assert_eq!(e.to_string(), format!("{name}: the archive holds no file"));
            assert!(e.is_client_error() && !e.is_too_large());
        }
    }

    #[test]
    fn folders_links_and_headers_count_as_entries() {
        use tar::EntryType;
        // Twenty thousand folder headers and no file: refused at the entry bound, not read
        // to the end.
        let dirs: Vec<(tar::Header, Vec<u8>)> =
            (0..20_000).map(|i| (header(EntryType::Directory, &format!("d{i}/")), Vec::new())).collect();
        let tgz = raw_tar_gz(dirs);
        let e = expand(vec![file("dirs.tgz", &tgz)], 1 << 20, &BOUNDS).unwrap_err();
        assert_eq!(
            e.to_string(),
            "dirs.tgz: more than 10000 entries (files, folders and headers), over the limit of 10000 entries per archive"
        );
        assert!(e.is_too_large());
        // A zip's folders count too, from its directory.
        let names: Vec<String> = (0..10_001).map(|i| format!("d{i}/")).collect();
        let entries: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), b"" as &[u8])).collect();
        let e = expand(vec![file("dirs.zip", &zip_of(&entries))], 1 << 20, &BOUNDS).unwrap_err();
        assert!(e.to_string().contains("over the limit of 10000 entries per archive"), "{e}");
        // A folder entry that carries data is not a folder.
        let tgz = raw_tar_gz(vec![(header(EntryType::Directory, "d/"), vec![0; 4096])]);
        let e = expand(vec![file("fat.tgz", &tgz)], 1 << 20, &BOUNDS).unwrap_err();
        assert!(e.to_string().contains("is a link or a special file"), "{e}");
    }

    #[test]
    fn bombs_and_floods_are_refused_with_the_bound_named() {
        // 64 MiB of zeros deflate to ~64 KiB: a thousand times.
        let zeros = vec![0u8; 64 << 20];
        let bomb = zip_of(&[("zeros.json", &zeros)]);
        assert!(bomb.len() < 1 << 20);
        let e = expand(vec![file("bomb.zip", &bomb)], 128 << 20, &BOUNDS).unwrap_err();
        assert!(e.is_too_large());
        assert!(e.to_string().starts_with("bomb.zip: `bomb/zeros.json` expands "), "{e}");
        assert!(e.to_string().ends_with("times its compressed size, over the limit of 200 times (a zip bomb?)"), "{e}");
        let tgz = tar_gz_of(&[("zeros.json", &zeros)]);
        let e = expand(vec![file("bomb.tgz", &tgz)], 128 << 20, &BOUNDS).unwrap_err();
        assert!(e.to_string().contains("the archive expands"), "{e}");
        // Over the total, under the ratio: a bound of its own.
        let small = Bounds { max_total_bytes: 10, ..BOUNDS };
        let e = expand(vec![file("a/x.txt", b"0123456789ab")], 1 << 20, &small).unwrap_err();
        assert!(e.to_string().contains("over the limit of 10 bytes per import"), "{e}");
        // Ten thousand files, refused from the zip's directory before any is read.
        let names: Vec<String> = (0..10_000).map(|i| format!("many/{i}.json")).collect();
        let entries: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), b"{}" as &[u8])).collect();
        let many = zip_of(&entries);
        let e = expand(vec![file("many.zip", &many)], 64 << 20, &BOUNDS).unwrap_err();
        assert_eq!(e.to_string(), "many.zip: 10000 files or more, over the limit of 1000 files per import");
        assert!(e.is_too_large());
        // Depth and path length.
        let deep = format!("{}x.json", "d/".repeat(20));
        let e = expand(vec![file(&deep, b"{}")], 1 << 20, &BOUNDS).unwrap_err();
        assert!(e.to_string().contains("20 folders deep, over the limit of 16 folders"), "{e}");
        let long = format!("d/{}.json", "x".repeat(2000));
        let e = expand(vec![file(&long, b"{}")], 1 << 20, &BOUNDS).unwrap_err();
        assert!(e.to_string().contains("over the limit of 1024 bytes"), "{e}");
        // A member over the per-file limit.
        let e = expand(vec![file("big.zip", &zip_of(&[("big.json", &[b' '; 2048])]))], 1024, &BOUNDS).unwrap_err();
        assert!(matches!(e, ImportError::TooLarge { .. }), "{e}");
    }
}
