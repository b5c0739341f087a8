//! What a write asks for besides its object (k8s.io/apimachinery's
//! CreateOptions/UpdateOptions/PatchOptions as the registry needs them): a
//! leaf every layer may name.

use std::time::Instant;

use crate::recorder::Recorder;
use crate::user::UserInfo;

/// What the client named in a write's query, as upstream's options object
/// (CreateOptions, UpdateOptions) carries it on to admission webhooks.
#[derive(Clone, Copy, Debug, Default)]
pub struct Given<'a> {
    /// `fieldManager`, as given.
    pub field_manager: Option<&'a str>,
    /// `fieldValidation`, as given.
    pub field_validation: Option<&'a str>,
}

/// How unknown fields in a body are treated (`fieldValidation` query parameter).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FieldValidation {
    /// Ignore them silently.
    Ignore,
    /// Drop them with a `Warning` header (the default).
    #[default]
    Warn,
    /// Reject the request with 400.
    Strict,
}

/// Options every write shares.
#[derive(Clone, Copy, Debug)]
pub struct WriteOptions<'a> {
    /// Who writes: the request's user (the server itself for its own
    /// writes).
    pub user: &'a UserInfo,
    /// `dryRun=All`: do everything but persist.
    pub dry_run: bool,
    /// `fieldValidation`.
    pub field_validation: FieldValidation,
    /// Who writes: `fieldManager`, else the User-Agent's product, as
    /// managedFields name it.
    pub manager: &'a str,
    /// The subresource the write is recorded under when it is not its
    /// endpoint's (`scale`); empty otherwise.
    pub subresource: &'a str,
    /// The query's options as the client gave them.
    pub given: Given<'a>,
    /// Where the request's steps note warnings and audit annotations (none
    /// for the server's own writes).
    pub recorder: Option<&'a Recorder>,
    /// When the request must be answered (calls it makes end by then).
    pub deadline: Option<Instant>,
}

impl Default for WriteOptions<'_> {
    /// A write of the server's own (`system:apiserver`), validated with
    /// warnings, persisted.
    fn default() -> Self {
        static APISERVER: std::sync::LazyLock<UserInfo> =
            std::sync::LazyLock::new(UserInfo::apiserver);
        WriteOptions {
            user: &APISERVER,
            dry_run: false,
            field_validation: FieldValidation::default(),
            manager: "",
            subresource: "",
            given: Given::default(),
            recorder: None,
            deadline: None,
        }
    }
}
