//! The audit log file (`--audit-log-path`), rotated by size as
//! kube-apiserver's (lumberjack): when a line would take the file past
//! `--audit-log-maxsize` megabytes, the file is renamed
//! `<name>-<UTC time, 2006-01-02T15-04-05.000>.<ext>` and a new one begun;
//! backups beyond `--audit-log-maxbackup`, or older than
//! `--audit-log-maxage` days, are removed. `-` writes to standard output.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// Where events go, and when the file turns over.
#[derive(Clone, Debug, Default)]
pub struct LogOptions {
    /// The file, or `-` for standard output.
    pub path: PathBuf,
    /// Megabytes before rotation (0: never).
    pub max_size_mb: u64,
    /// Backups kept (0: all).
    pub max_backups: usize,
    /// Days a backup is kept (0: forever).
    pub max_age_days: u64,
}

/// The log: one JSON line per event, each written whole.
pub struct Log {
    options: LogOptions,
    file: Mutex<Option<Open>>,
}

struct Open {
    file: File,
    size: u64,
}

impl Log {
    /// A log writing to `options.path` (opened on the first event; its
    /// directory is made).
    pub fn new(options: LogOptions) -> std::io::Result<Log> {
        let log = Log {
            options,
            file: Mutex::new(None),
        };
        if !log.to_stdout() {
            let mut file = log.file.lock().unwrap_or_else(PoisonError::into_inner);
            *file = Some(log.open()?);
        }
        Ok(log)
    }

    fn to_stdout(&self) -> bool {
        self.options.path == Path::new("-")
    }

    fn open(&self) -> std::io::Result<Open> {
        if let Some(dir) = self
            .options
            .path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
        {
            std::fs::create_dir_all(dir)?;
        }
        let mut open = OpenOptions::new();
        open.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o600);
        let file = open.open(&self.options.path)?;
        let size = file.metadata()?.len();
        Ok(Open { file, size })
    }

    /// Writes one line (`line` ends with a newline).
    pub fn write(&self, line: &[u8]) {
        if self.to_stdout() {
            let _ = std::io::stdout().lock().write_all(line);
            return;
        }
        let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        let limit = self.options.max_size_mb * 1024 * 1024;
        let full = file.as_ref().is_some_and(|open| {
            limit > 0 && open.size > 0 && open.size + line.len() as u64 > limit
        });
        if full || file.is_none() {
            *file = None;
            if full && let Err(e) = self.rotate() {
                tracing::warn!(error = %e, path = %self.options.path.display(), "rotating the audit log failed");
            }
            match self.open() {
                Ok(open) => *file = Some(open),
                Err(e) => {
                    tracing::warn!(error = %e, path = %self.options.path.display(), "opening the audit log failed");
                    return;
                }
            }
        }
        if let Some(open) = file.as_mut() {
            match open.file.write_all(line) {
                Ok(()) => open.size += line.len() as u64,
                Err(e) => tracing::warn!(error = %e, "writing the audit log failed"),
            }
        }
    }

    /// Renames the file to its backup name and removes the backups beyond
    /// the count or age kept.
    fn rotate(&self) -> std::io::Result<()> {
        let path = &self.options.path;
        let (stem, ext) = name_parts(path);
        let stamp = jiff::Timestamp::now()
            .strftime("%Y-%m-%dT%H-%M-%S%.3f")
            .to_string();
        let backup = path.with_file_name(format!("{stem}-{stamp}{ext}"));
        std::fs::rename(path, &backup)?;
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        // Backups sort by their names' times, newest last.
        let mut backups: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)?
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name().into_string().ok()?;
                let time = name
                    .strip_prefix(&format!("{stem}-"))?
                    .strip_suffix(ext.as_str())?;
                jiff::civil::DateTime::strptime("%Y-%m-%dT%H-%M-%S%.f", time).ok()?;
                Some((time.to_owned(), entry.path()))
            })
            .collect();
        backups.sort();
        let mut remove = Vec::new();
        if self.options.max_backups > 0 && backups.len() > self.options.max_backups {
            let excess = backups.len() - self.options.max_backups;
            remove.extend(backups.drain(..excess).map(|(_, p)| p));
        }
        if self.options.max_age_days > 0 {
            let cutoff = jiff::Timestamp::now()
                - jiff::SignedDuration::from_hours(24 * self.options.max_age_days as i64);
            let cutoff = cutoff.strftime("%Y-%m-%dT%H-%M-%S%.3f").to_string();
            remove.extend(
                backups
                    .iter()
                    .filter(|(time, _)| *time < cutoff)
                    .map(|(_, p)| p.clone()),
            );
        }
        for old in remove {
            let _ = std::fs::remove_file(old);
        }
        Ok(())
    }
}

/// `audit.log` as (`audit`, `.log`).
fn name_parts(path: &Path) -> (String, String) {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem.to_owned(), format!(".{ext}")),
        _ => (name, String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_file_turns_over_and_old_backups_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        let log = Log::new(LogOptions {
            path: path.clone(),
            max_size_mb: 1,
            max_backups: 2,
            max_age_days: 0,
        })
        .unwrap();
        let mut line = vec![b'x'; 400 * 1024];
        line.push(b'\n');
        // 400 KiB lines: two fit in a megabyte, the third turns it over.
        for _ in 0..9 {
            log.write(&line);
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names.len(), 3, "{names:?}");
        assert_eq!(names[2], "audit.log");
        assert!(
            names[0].starts_with("audit-") && names[0].ends_with(".log"),
            "{names:?}"
        );
        assert_eq!(std::fs::metadata(&path).unwrap().len(), line.len() as u64);
    }
}
