//! The storage conformance suite: every backend runs these same functions
//! (`tests/embedded.rs`, later `tests/etcd.rs`), so the server can rely on one
//! behaviour whatever stores its data, as k8s.io/apiserver's storage tests do.
//!
//! Each test takes a key prefix of its own and must not assume revisions start
//! at any particular number or that no other test writes concurrently, except
//! where it says so (no-op writes, compaction).

#![allow(dead_code, clippy::unwrap_used)]

pub mod crud;
pub mod feed;
pub mod list;
pub mod watch;

use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use kapi_storage::Storage;

/// Runs every conformance test on `store`, each under a fresh key prefix.
/// Compaction runs last because it expires old revisions store-wide.
pub async fn run_all(store: &dyn Storage) {
    let base = unique_base();
    macro_rules! run {
        ($($module:ident :: $test:ident),* $(,)?) => {$(
            eprintln!("conformance: {}", stringify!($test));
            $module::$test(store, &format!("{base}{}/", stringify!($test))).await;
        )*};
    }
    run!(
        crud::create_and_get,
        crud::create_twice_is_already_exists,
        crud::update_with_stale_revision_is_conflict,
        crud::update_of_missing_key_is_not_found,
        crud::noop_update_writes_nothing,
        crud::delete_checks_revision_and_returns_last_value,
        crud::delete_of_missing_key_is_not_found,
        crud::recreate_after_delete_is_a_new_incarnation,
        crud::revisions_only_grow,
        crud::guaranteed_update_paths,
        crud::guaranteed_update_under_concurrent_writers,
        crud::concurrent_creates_of_one_key_one_wins,
        crud::concurrent_gets_answer_each_for_its_key,
        list::list_is_ordered_and_isolated_by_prefix,
        list::list_revision_bounds,
        list::list_pages_are_pinned_to_the_first_revision,
        list::list_predicate_counts_only_matching_items,
        list::list_at_an_older_revision_sees_deleted_objects,
        watch::watch_replays_then_continues_live,
        watch::watch_from_a_middle_revision,
        watch::watch_translates_predicate_transitions,
        watch::expiring_keys_are_deleted_when_their_time_runs_out,
        feed::feed_lists_then_hands_over_changes_under_its_prefix,
        feed::feed_reports_progress_past_writes_elsewhere,
        feed::feeds_started_during_writes_miss_nothing,
        watch::compaction_expires_old_revisions,
    );
}

/// A prefix no earlier run used, so the suite can run on a shared server.
pub fn unique_base() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("/conformance/{nanos}/")
}

/// Bytes from a string, for readable test values.
pub fn b(value: &str) -> Bytes {
    Bytes::copy_from_slice(value.as_bytes())
}
