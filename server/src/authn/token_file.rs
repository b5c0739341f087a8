//! `--token-auth-file`: static bearer tokens and their users, as
//! kube-apiserver's token file authenticator.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use crate::user::{UserInfo, add_authenticated};

/// Why the token file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    /// The file could not be read.
    #[error("token file {path}: {error}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        error: std::io::Error,
    },
    /// A record is malformed.
    #[error("token file {path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong, with the record's number.
        message: String,
    },
}

/// The tokens of one file.
#[derive(Debug, Default)]
pub struct TokenFile {
    users: HashMap<String, Arc<UserInfo>>,
}

impl TokenFile {
    /// The static tokens of `path`: CSV records `token,user,uid[,"group1,group2"]`
    /// (kube-apiserver's `--token-auth-file` format).
    pub fn read(path: &Path) -> Result<TokenFile, TokenFileError> {
        let shown = path.display().to_string();
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .trim(csv::Trim::Headers)
            .from_path(path)
            .map_err(|e| TokenFileError::Io {
                path: shown.clone(),
                error: std::io::Error::other(e.to_string()),
            })?;
        let mut users = HashMap::new();
        for (number, record) in reader.records().enumerate() {
            let record = record.map_err(|e| TokenFileError::Invalid {
                path: shown.clone(),
                message: e.to_string(),
            })?;
            let fields: Vec<&str> = record.iter().map(str::trim_start).collect();
            if fields.len() < 3 {
                return Err(TokenFileError::Invalid {
                    path: shown.clone(),
                    message: format!(
                        "record {} must have at least 3 columns (token, user name, user uid), found {}",
                        number + 1,
                        fields.len()
                    ),
                });
            }
            if fields[0].is_empty() {
                tracing::warn!(path = %shown, record = number + 1, "empty token in token file");
                continue;
            }
            let mut user = UserInfo {
                name: fields[1].to_owned(),
                uid: fields[2].to_owned(),
                ..UserInfo::default()
            };
            if let Some(groups) = fields.get(3) {
                user.groups.extend(
                    groups
                        .split(',')
                        .map(str::trim)
                        .filter(|g| !g.is_empty())
                        .map(str::to_owned),
                );
            }
            add_authenticated(&mut user);
            if users.insert(fields[0].to_owned(), Arc::new(user)).is_some() {
                tracing::warn!(path = %shown, record = number + 1, "duplicate token in token file");
            }
        }
        Ok(TokenFile { users })
    }

    /// The user of `token`, if the file holds it.
    pub fn user(&self, token: &str) -> Option<Arc<UserInfo>> {
        self.users.get(token).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::user::AUTHENTICATED;

    fn file(text: &str) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), text).unwrap();
        file
    }

    #[test]
    fn token_file_names_users_and_groups() {
        let f = file("t1,alice,u1,\"dev,ops\"\nt2, bob, u2\n");
        let tokens = TokenFile::read(f.path()).unwrap();
        let alice = tokens.user("t1").unwrap();
        assert_eq!(alice.name, "alice");
        assert_eq!(alice.uid, "u1");
        assert_eq!(alice.groups, ["dev", "ops", AUTHENTICATED]);
        let bob = tokens.user("t2").unwrap();
        assert_eq!((bob.name.as_str(), bob.groups.len()), ("bob", 1));
        assert!(tokens.user("nope").is_none());
    }

    #[test]
    fn short_records_are_refused() {
        let f = file("t1,alice\n");
        let err = TokenFile::read(f.path()).unwrap_err();
        assert!(err.to_string().contains("at least 3 columns"), "{err}");
    }
}
