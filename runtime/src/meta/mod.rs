//! meta.k8s.io/v1 types (k8s.io/apimachinery/pkg/apis/meta/v1) with their exact JSON.

mod condition;
mod discovery;
mod label_selector;
mod object_meta;
mod options;
mod protobuf;
mod status;
mod table;
mod time;
mod watch;

pub use condition::Condition;
pub use discovery::{
    APIGroup, APIGroupDiscovery, APIGroupDiscoveryList, APIGroupList, APIResource,
    APIResourceDiscovery, APIResourceList, APISubresourceDiscovery, APIVersionDiscovery,
    APIVersions, GroupVersionForDiscovery, GroupVersionKind, ServerAddressByClientCIDR,
};
pub use label_selector::{LabelSelector, LabelSelectorRequirement};
pub use object_meta::{
    FieldsV1, ListMeta, ManagedFieldsEntry, ObjectMeta, OwnerReference, TypeMeta,
};
pub use options::{DeleteOptions, Preconditions};
pub use status::{Status, StatusCause, StatusDetails};
pub use table::{Table, TableColumnDefinition, TableRow, human_duration};
pub use time::{MicroTime, Time};
pub use watch::WatchEvent;
