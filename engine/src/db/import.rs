//! The import folder: where `LOAD CSV` reads files, `DIR/import` of a database in a folder. A URL
//! names a file inside it (`file:///people.csv`, `file://people.csv` or `people.csv`); nothing
//! outside it is read (no `..`, no absolute path, no link leading out), and nothing is fetched
//! from the network.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use super::Database;

/// The import folder's name inside a database folder.
pub const IMPORT_FOLDER: &str = "import";

impl Database {
    /// The folder `LOAD CSV` reads (`DIR/import`); `None` for a database in memory.
    pub fn import_folder(&self) -> Option<PathBuf> {
        self.dir().map(|d| d.join(IMPORT_FOLDER))
    }

    /// The path and the bytes of the import folder's file `url` names, at most
    /// `import_file_bytes_max` of them. The error says what was wrong (and never shows what lies
    /// outside the folder).
    pub(crate) fn import_file(&self, url: &str) -> Result<(Arc<str>, Arc<[u8]>), String> {
        let folder = self
            .import_folder()
            .ok_or_else(|| "LOAD CSV reads the import folder of a database in a folder (DIR/import); this one is in memory".to_owned())?;
        let relative = relative_path(url)?;
        let path = folder.join(&relative);
        let shown = relative.display();
        let missing = || format!("LOAD CSV: no file {shown} in the import folder {}", folder.display());
        // Links may point anywhere: the file's real place must be in the folder's.
        let real_folder = folder.canonicalize().map_err(|_| missing())?;
        let real = path.canonicalize().map_err(|_| missing())?;
        if !real.starts_with(&real_folder) {
            return Err(format!("LOAD CSV: {shown} leads out of the import folder; only files inside it are read"));
        }
        let meta = std::fs::metadata(&real).map_err(|_| missing())?;
        if !meta.is_file() {
            return Err(format!("LOAD CSV: {shown} is not a file"));
        }
        let max = self.config().limits.import_file_bytes_max;
        if meta.len() > max as u64 {
            return Err(format!("LOAD CSV: {shown} is {} bytes, over import_file_bytes_max ({max})", meta.len()));
        }
        let bytes = std::fs::read(&real).map_err(|e| format!("LOAD CSV: {shown} cannot be read: {e}"))?;
        if bytes.len() > max {
            return Err(format!("LOAD CSV: {shown} is over import_file_bytes_max ({max} bytes)"));
        }
        Ok((Arc::from(real.to_string_lossy().as_ref()), Arc::from(bytes)))
    }
}

/// The path inside the import folder a URL names: `file:///a/b.csv`, `file://a/b.csv` and
/// `a/b.csv` name `a/b.csv`. Other schemes, `..`, and an empty name are refused.
fn relative_path(url: &str) -> Result<PathBuf, String> {
    let rest = match url.split_once("://") {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("file") => rest,
        Some((scheme, _)) => {
            return Err(format!(
                "LOAD CSV reads files of the import folder (file:///name.csv), not {scheme}:// URLs: nothing is fetched from the network"
            ))
        }
        None => url,
    };
    let rest = rest.trim_start_matches('/');
    let mut out = PathBuf::new();
    for part in Path::new(rest).components() {
        match part {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(format!("LOAD CSV: {url:?} leads out of the import folder; name a file inside it"))
            }
        }
    }
    if out.as_os_str().is_empty() {
        return Err(format!("LOAD CSV: {url:?} names no file"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::relative_path;
    use std::path::PathBuf;

    #[test]
    fn urls_name_files_inside_the_folder() {
        for (url, want) in [
            ("file:///a.csv", "a.csv"),
            ("file://a.csv", "a.csv"),
            ("FILE:///d/a.csv", "d/a.csv"),
            ("a.csv", "a.csv"),
            ("./d/./a.csv", "d/a.csv"),
        ] {
            assert_eq!(relative_path(url), Ok(PathBuf::from(want)), "{url}");
        }
        for url in ["file:///../a.csv", "d/../../a.csv", "https://example.com/a.csv", "file:///", ""] {
            assert!(relative_path(url).is_err(), "{url}");
        }
    }
}
