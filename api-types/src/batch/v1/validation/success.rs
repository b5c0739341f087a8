//! A job's success policy (`validateSuccessPolicy`): the indexes or counts
//! of succeeded indexes that complete an `Indexed` job early.

use kapi_runtime::validation::{FieldErrors, FieldPath};

use crate::batch::v1::job::{JobSpec, SuccessPolicyRule};
use crate::validation::{Raw, nonnegative};

/// The most rules a success policy has.
const MAX_RULES: usize = 20;

/// The success policy: only for indexed jobs, at least one rule, each
/// naming indexes or a count within the completions.
pub(super) fn success_policy(spec: &JobSpec, path: &FieldPath, errs: &mut FieldErrors) {
    let Some(policy) = &spec.success_policy else {
        return;
    };
    let policy_path = path.child("successPolicy");
    if spec.completion_mode.as_deref() != Some("Indexed") {
        // Upstream prints the whole Go struct, pointers included.
        errs.invalid(
            policy_path,
            Raw("batch.SuccessPolicy{...}"),
            "requires indexed completion mode",
        );
        return;
    }
    let rules_path = policy_path.child("rules");
    if policy.rules.is_empty() {
        errs.required(
            rules_path.clone(),
            "at least one rules must be specified when the successPolicy is specified",
        );
    }
    if policy.rules.len() > MAX_RULES {
        errs.too_many(rules_path.clone(), policy.rules.len(), MAX_RULES);
    }
    let completions = spec.completions.unwrap_or_default();
    for (i, rule) in policy.rules.iter().enumerate() {
        success_rule(rule, completions, &rules_path.index(i), errs);
    }
}

/// `validateSuccessPolicyRule`.
fn success_rule(
    rule: &SuccessPolicyRule,
    completions: i32,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    if rule.succeeded_count.is_none() && rule.succeeded_indexes.is_none() {
        errs.required(
            path.clone(),
            "at least one of succeededCount or succeededIndexes must be specified",
        );
    }
    let mut total = 0;
    if let Some(indexes) = &rule.succeeded_indexes {
        let indexes_path = path.child("succeededIndexes");
        if indexes.len() > 64 * 1024 {
            errs.too_long(indexes_path.clone(), 64 * 1024);
        }
        match count_indexes(indexes, completions) {
            Ok(n) => total = n,
            Err(e) => {
                let detail = format!("error parsing succeededIndexes: {e}");
                errs.invalid(indexes_path, indexes.as_str(), &detail);
            }
        }
    }
    if let Some(count) = rule.succeeded_count {
        let count_path = path.child("succeededCount");
        nonnegative(Some(i64::from(count)), &count_path, errs);
        if count > completions {
            let detail = format!(
                "must be less than or equal to {completions} (the number of specified completions)"
            );
            errs.invalid(count_path.clone(), count, &detail);
        }
        if rule.succeeded_indexes.is_some() && i64::from(count) > total {
            let detail = format!(
                "must be less than or equal to {total} (the number of indexes in the specified \
                 succeededIndexes field)"
            );
            errs.invalid(count_path, count, &detail);
        }
    }
}

/// `validateIndexesFormat`: increasing intervals `a` or `a-b` of indexes
/// below `completions`, separated by commas; how many indexes they hold.
fn count_indexes(text: &str, completions: i32) -> Result<i64, String> {
    if text.is_empty() {
        return Ok(0);
    }
    let mut last: Option<i64> = None;
    let mut total = 0;
    let parse = |s: &str| -> Result<i64, String> {
        let n: i64 = s
            .parse()
            .map_err(|_| format!("cannot convert string to integer for index: {s:?}"))?;
        if n >= i64::from(completions) {
            return Err(format!("too large index: {s:?}"));
        }
        Ok(n)
    };
    for interval in text.split(',') {
        let limits: Vec<&str> = interval.split('-').collect();
        if limits.len() > 2 {
            return Err(format!(
                "the fragment {interval:?} violates the requirement that an index interval can \
                 have at most two parts separated by '-'"
            ));
        }
        let first = parse(limits[0])?;
        if let Some(previous) = last
            && previous >= first
        {
            return Err(format!(
                "non-increasing order, previous: {previous}, current: {first}"
            ));
        }
        total += 1;
        last = Some(first);
        if let Some(second) = limits.get(1) {
            let second = parse(second)?;
            if first >= second {
                return Err(format!(
                    "non-increasing order, previous: {first}, current: {second}"
                ));
            }
            total += second - first;
            last = Some(second);
        }
    }
    Ok(total)
}
