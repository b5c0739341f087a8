//! A job's pod failure policy (`validatePodFailurePolicy`), per-index backoff
//! limits, pod replacement policy and manager, and what an update may not
//! change of them.

use std::collections::BTreeSet;
use std::fmt;

use kapi_runtime::ApiType;
use kapi_runtime::validation::{FieldErrors, FieldPath, qualified_name_errors};

use crate::batch::v1::job::{
    JobSpec, PodFailurePolicy, PodFailurePolicyOnExitCodesRequirement,
    PodFailurePolicyOnPodConditionsPattern, PodFailurePolicyRule,
};
use crate::validation::{Raw, domain_prefixed_path, nonnegative};

/// The actions of a pod failure rule, sorted.
const ACTIONS: [&str; 4] = ["Count", "FailIndex", "FailJob", "Ignore"];

/// The statuses a pod condition pattern may ask for, sorted.
const CONDITION_STATUSES: [&str; 3] = ["False", "True", "Unknown"];

/// The most rules a failure policy has, and the most condition patterns a
/// rule has.
const MAX_RULES: usize = 20;
/// The most exit codes a failure rule lists.
const MAX_EXIT_CODES: usize = 255;

/// The most failed indexes an indexed job may tolerate.
const MAX_FAILED_INDEXES: i32 = 100_000;
/// Above this many completions, a per-index backoff limit needs tighter limits.
const COMPLETIONS_SOFT_LIMIT: i32 = 100_000;
/// The parallelism and failed-index limit of such a job.
const HIGH_COMPLETIONS_LIMIT: i32 = 10_000;

/// A list of exit codes as Go's `%#v` prints it: `[]int32{1, 2}`.
struct GoInts<'a>(&'a [i32]);

impl fmt::Debug for GoInts<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<String> = self.0.iter().map(i32::to_string).collect();
        write!(f, "[]int32{{{}}}", items.join(", "))
    }
}

/// Go's `%q` of a string list: `["a" "b"]`.
fn quoted_list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("{i:?}")).collect();
    format!("[{}]", quoted.join(" "))
}

/// `backoffLimitPerIndex` and `maxFailedIndexes`: non-negative, the second
/// only with the first, both only for indexed jobs, within the limits.
pub(super) fn per_index_limits(spec: &JobSpec, path: &FieldPath, errs: &mut FieldErrors) {
    let per_index_path = path.child("backoffLimitPerIndex");
    let max_path = path.child("maxFailedIndexes");
    nonnegative(
        spec.backoff_limit_per_index.map(i64::from),
        &per_index_path,
        errs,
    );
    if let Some(max) = spec.max_failed_indexes {
        nonnegative(Some(i64::from(max)), &max_path, errs);
        if spec.backoff_limit_per_index.is_none() {
            errs.required(per_index_path.clone(), "when maxFailedIndexes is specified");
        }
    }
    if spec.completion_mode.as_deref() == Some("Indexed") {
        let max = spec.max_failed_indexes;
        if let (Some(completions), Some(max)) = (spec.completions, max)
            && max > completions
        {
            errs.invalid(
                max_path.clone(),
                max,
                "must be less than or equal to completions",
            );
        }
        if let Some(max) = max.filter(|m| *m > MAX_FAILED_INDEXES) {
            let detail = format!("must be less than or equal to {MAX_FAILED_INDEXES}");
            errs.invalid(max_path.clone(), max, &detail);
        }
        let high = spec.completions.is_some_and(|c| c > COMPLETIONS_SOFT_LIMIT);
        if high && spec.backoff_limit_per_index.is_some() {
            let detail = format!(
                "must be less than or equal to {HIGH_COMPLETIONS_LIMIT} when completions are above \
                 {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
            );
            match max {
                None => errs.required(
                    max_path.clone(),
                    &format!(
                        "must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"
                    ),
                ),
                Some(m) if m > HIGH_COMPLETIONS_LIMIT => errs.invalid(max_path.clone(), m, &detail),
                Some(_) => {}
            }
            if let Some(p) = spec.parallelism.filter(|p| *p > HIGH_COMPLETIONS_LIMIT) {
                errs.invalid(path.child("parallelism"), p, &detail);
            }
        }
    } else {
        if let Some(n) = spec.backoff_limit_per_index {
            errs.invalid(per_index_path, n, "requires indexed completion mode");
        }
        if let Some(n) = spec.max_failed_indexes {
            errs.invalid(max_path, n, "requires indexed completion mode");
        }
    }
}

/// `validatePodFailurePolicy`: each rule's action and requirement.
pub(super) fn pod_failure_policy(spec: &JobSpec, path: &FieldPath, errs: &mut FieldErrors) {
    let Some(policy) = &spec.pod_failure_policy else {
        return;
    };
    let pod = &spec.template.spec;
    let names: BTreeSet<&str> = pod
        .containers
        .iter()
        .chain(pod.init_containers.iter().flatten())
        .map(|c| c.name.as_str())
        .collect();
    let rules_path = path.child("podFailurePolicy").child("rules");
    if policy.rules.len() > MAX_RULES {
        errs.too_many(rules_path.clone(), policy.rules.len(), MAX_RULES);
    }
    for (i, rule) in policy.rules.iter().enumerate() {
        pod_failure_rule(spec, rule, &names, &rules_path.index(i), errs);
    }
}

/// `validatePodFailurePolicyRule`.
fn pod_failure_rule(
    spec: &JobSpec,
    rule: &PodFailurePolicyRule,
    names: &BTreeSet<&str>,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let action_path = path.child("action");
    match rule.action.as_str() {
        "" => errs.required(
            action_path,
            &format!("valid values: {}", quoted_list(&ACTIONS)),
        ),
        "FailIndex" if spec.backoff_limit_per_index.is_none() => errs.invalid(
            action_path,
            "FailIndex",
            "requires the backoffLimitPerIndex to be set",
        ),
        action if ACTIONS.contains(&action) => {}
        action => errs.not_supported(action_path, action, &ACTIONS),
    }
    if let Some(codes) = &rule.on_exit_codes {
        on_exit_codes(codes, names, &path.child("onExitCodes"), errs);
    }
    let conditions = rule.on_pod_conditions.as_deref().unwrap_or_default();
    if conditions.len() > MAX_RULES {
        let conditions_path = path.child("onPodConditions");
        errs.too_many(conditions_path, conditions.len(), MAX_RULES);
    }
    for (j, pattern) in conditions.iter().enumerate() {
        on_pod_condition(pattern, &path.child("onPodConditions").index(j), errs);
    }
    match (rule.on_exit_codes.is_some(), conditions.is_empty()) {
        (true, false) => errs.invalid_without_value(
            path.clone(),
            "specifying both OnExitCodes and OnPodConditions is not supported",
        ),
        (false, true) => errs.invalid_without_value(
            path.clone(),
            "specifying one of OnExitCodes and OnPodConditions is required",
        ),
        _ => {}
    }
}

/// `validatePodFailurePolicyRuleOnPodConditions` of one pattern.
fn on_pod_condition(
    pattern: &PodFailurePolicyOnPodConditionsPattern,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    for detail in qualified_name_errors(&pattern.type_) {
        errs.invalid(path.child("type"), pattern.type_.as_str(), &detail);
    }
    let status_path = path.child("status");
    match pattern.status.as_str() {
        "" => errs.required(
            status_path,
            &format!("valid values: {}", quoted_list(&CONDITION_STATUSES)),
        ),
        status if CONDITION_STATUSES.contains(&status) => {}
        status => errs.not_supported(status_path, status, &CONDITION_STATUSES),
    }
}

/// `validatePodFailurePolicyRuleOnExitCodes`: the operator, a container of
/// the template, sorted distinct values (no 0 with `In`).
fn on_exit_codes(
    codes: &PodFailurePolicyOnExitCodesRequirement,
    names: &BTreeSet<&str>,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    const OPERATORS: [&str; 2] = ["In", "NotIn"];
    let operator_path = path.child("operator");
    match codes.operator.as_str() {
        "" => errs.required(
            operator_path,
            &format!("valid values: {}", quoted_list(&OPERATORS)),
        ),
        op if OPERATORS.contains(&op) => {}
        op => errs.not_supported(operator_path, op, &OPERATORS),
    }
    if let Some(name) = &codes.container_name
        && !names.contains(name.as_str())
    {
        errs.invalid(
            path.child("containerName"),
            name.as_str(),
            "must be one of the container or initContainer names in the pod template",
        );
    }
    let values_path = path.child("values");
    if codes.values.is_empty() {
        errs.invalid(
            values_path.clone(),
            GoInts(&codes.values),
            "at least one value is required",
        );
    } else if codes.values.len() > MAX_EXIT_CODES {
        errs.too_many(values_path.clone(), codes.values.len(), MAX_EXIT_CODES);
    }
    let mut seen = BTreeSet::new();
    for (j, value) in codes.values.iter().enumerate() {
        if codes.operator == "In" && *value == 0 {
            errs.invalid(
                values_path.index(j),
                value,
                "must not be 0 for the In operator",
            );
        }
        if !seen.insert(value) {
            errs.duplicate(values_path.index(j), value);
        }
    }
    if codes.values.windows(2).any(|w| w[0] > w[1]) {
        errs.invalid(values_path, GoInts(&codes.values), "must be ordered");
    }
}

/// `managedBy`: a domain-prefixed path of at most 63 characters.
pub(super) fn managed_by(spec: &JobSpec, path: &FieldPath, errs: &mut FieldErrors) {
    let Some(manager) = spec.managed_by.as_deref() else {
        return;
    };
    let manager_path = path.child("managedBy");
    domain_prefixed_path(manager, &manager_path, errs);
    if manager.len() > 63 {
        errs.too_long(manager_path, 63);
    }
}

/// The `Job` update rules of the policies (`ValidateJobSpecUpdate`): the pod
/// failure policy, per-index backoff limit, manager and success policy are
/// immutable.
pub(super) fn policies_update(
    new: &JobSpec,
    old: &JobSpec,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    const IMMUTABLE: &str = "field is immutable";
    if !new.pod_failure_policy.semantic_eq(&old.pod_failure_policy) {
        let value = new
            .pod_failure_policy
            .as_ref()
            .map_or_else(|| "null".to_owned(), go_pod_failure_policy);
        errs.invalid(path.child("podFailurePolicy"), Raw(&value), IMMUTABLE);
    }
    if new.backoff_limit_per_index != old.backoff_limit_per_index {
        let value = new
            .backoff_limit_per_index
            .map_or_else(|| "null".to_owned(), |n| n.to_string());
        errs.invalid(path.child("backoffLimitPerIndex"), Raw(&value), IMMUTABLE);
    }
    if new.managed_by != old.managed_by {
        let value = new
            .managed_by
            .as_ref()
            .map_or_else(|| "null".to_owned(), |m| format!("{m:?}"));
        errs.invalid(path.child("managedBy"), Raw(&value), IMMUTABLE);
    }
    if !new.success_policy.semantic_eq(&old.success_policy) {
        // Upstream prints the Go struct with its pointers.
        let value = if new.success_policy.is_some() {
            "batch.SuccessPolicy{...}"
        } else {
            "null"
        };
        errs.invalid(path.child("successPolicy"), Raw(value), IMMUTABLE);
    }
}

/// A pod failure policy as Go's `%#v` prints the internal type (a set
/// exit-code requirement is a pointer, shown without its address).
fn go_pod_failure_policy(policy: &PodFailurePolicy) -> String {
    let rules: Vec<String> = policy
        .rules
        .iter()
        .map(|rule| {
            let codes = if rule.on_exit_codes.is_some() {
                "(*batch.PodFailurePolicyOnExitCodesRequirement)(...)"
            } else {
                "(*batch.PodFailurePolicyOnExitCodesRequirement)(nil)"
            };
            let conditions = match &rule.on_pod_conditions {
                None => "[]batch.PodFailurePolicyOnPodConditionsPattern(nil)".to_owned(),
                Some(patterns) => {
                    let items: Vec<String> = patterns
                        .iter()
                        .map(|p| {
                            format!(
                                "batch.PodFailurePolicyOnPodConditionsPattern{{Type:{:?}, Status:{:?}}}",
                                p.type_, p.status
                            )
                        })
                        .collect();
                    format!(
                        "[]batch.PodFailurePolicyOnPodConditionsPattern{{{}}}",
                        items.join(", ")
                    )
                }
            };
            format!(
                "batch.PodFailurePolicyRule{{Action:{:?}, OnExitCodes:{codes}, OnPodConditions:{conditions}}}",
                rule.action
            )
        })
        .collect();
    format!(
        "batch.PodFailurePolicy{{Rules:[]batch.PodFailurePolicyRule{{{}}}}}",
        rules.join(", ")
    )
}

/// `validatePodReplacementPolicy`: `Failed` only, with a pod failure policy.
pub(super) fn pod_replacement_policy(spec: &JobSpec, path: &FieldPath, errs: &mut FieldErrors) {
    let Some(policy) = spec.pod_replacement_policy.as_deref() else {
        return;
    };
    let policy_path = path.child("podReplacementPolicy");
    if spec.pod_failure_policy.is_some() {
        if policy != "Failed" {
            errs.not_supported(policy_path, policy, &["Failed"]);
        }
    } else if !matches!(policy, "Failed" | "TerminatingOrFailed") {
        errs.not_supported(policy_path, policy, &["Failed", "TerminatingOrFailed"]);
    }
}
