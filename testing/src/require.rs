//! The one guard for tests that need something this repository does not hold:
//! etcd, `../shared` (upstream's definitions, recorded answers), openssl, an
//! older kubectl.
//!
//! cargo hides what a passing test prints, so a test that printed "SKIPPED" and
//! returned used to read as `ok`. [`require`] makes a skip either a failure or a
//! record:
//!
//! - with `KAPI_REQUIRE_ALL` set (non-empty and not `0`; `.ci/run` sets it), a
//!   missing part fails the test, naming what is missing and how to get it;
//! - otherwise (a developer's `cargo test --workspace`) the test is skipped: a
//!   SKIPPED line on stderr and one line in `target/kapi-skipped-tests.txt` at
//!   the workspace root, which `.ci/run` prints as a summary.

use std::io::Write;
use std::path::PathBuf;

/// The variable that turns every skip into a failure.
pub const REQUIRE_ALL: &str = "KAPI_REQUIRE_ALL";

/// Whether the test may go on: true when `available`. When not, panics under
/// [`REQUIRE_ALL`], otherwise records the skip and answers false (the test then
/// returns). `what` names the missing part (a path, a command), `how` says how
/// to get it (`apt-get install etcd-server`).
#[track_caller]
pub fn require(available: bool, what: &str, how: &str) -> bool {
    if available {
        return true;
    }
    let caller = std::panic::Location::caller();
    if require_all(std::env::var(REQUIRE_ALL).ok().as_deref()) {
        panic!("{what} is missing and {REQUIRE_ALL} forbids skipping ({caller}): {how}");
    }
    let test = std::thread::current()
        .name()
        .unwrap_or("unnamed test")
        .to_owned();
    let line = format!("{caller} {test}: {what} is missing ({how})");
    eprintln!("\n*** SKIPPED {line} ***\n");
    if let Err(e) = record(&line) {
        eprintln!("cannot record the skip in {}: {e}", skip_log().display());
    }
    false
}

/// Where skips are listed: `<workspace>/target/kapi-skipped-tests.txt`.
pub fn skip_log() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../target/kapi-skipped-tests.txt"
    ))
}

/// Whether a value of [`REQUIRE_ALL`] asks for every test to run.
fn require_all(value: Option<&str>) -> bool {
    value.is_some_and(|v| !v.is_empty() && v != "0")
}

/// Appends `line` to [`skip_log`] in one write, so that tests skipping at once
/// on several threads do not interleave.
fn record(line: &str) -> std::io::Result<()> {
    let path = skip_log();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    file.write_all(format!("{line}\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_non_empty_value_other_than_zero_requires_all() {
        assert!(!require_all(None));
        assert!(!require_all(Some("")));
        assert!(!require_all(Some("0")));
        assert!(require_all(Some("1")));
        assert!(require_all(Some("yes")));
    }

    #[test]
    fn an_available_part_lets_the_test_run() {
        assert!(require(true, "/bin/sh", "it is always there"));
    }
}
