//! `ValidateResourceQuota` and its update rules: the names and amounts of the
//! hard caps and of the usage, the scopes (known ones, none that conflict,
//! each valid for every capped resource) and the scope selector's
//! expressions; scopes never change on update.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use kapi_runtime::Quantity;
use kapi_runtime::validation::{FieldErrors, FieldPath};

use super::resource_names::{POD_COMPUTE, is_standard_quota, quantity_value, quota_resource_name};
use crate::core::v1::resourcequota::{
    ResourceQuota, ResourceQuotaSpec, ResourceQuotaStatus, ScopeSelector,
};
use crate::validation::GoStrings;

/// The scopes upstream knows.
const SCOPES: [&str; 6] = [
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
];

/// Scopes that may not both be set.
const CONFLICTS: [(&str, &str); 2] = [
    ("BestEffort", "NotBestEffort"),
    ("Terminating", "NotTerminating"),
];

/// `IsResourceQuotaScopeValidForResource`: `BestEffort` counts only pods,
/// the other pod scopes pods and their compute resources; unknown scopes
/// pass here (they are reported on their own).
fn scope_fits(scope: &str, resource: &str) -> bool {
    match scope {
        "BestEffort" => resource == "pods",
        "Terminating"
        | "NotTerminating"
        | "NotBestEffort"
        | "PriorityClass"
        | "CrossNamespacePodAffinity" => resource == "pods" || POD_COMPUTE.contains(&resource),
        _ => true,
    }
}

/// A resource list's names and amounts.
fn resource_list(
    list: Option<&BTreeMap<String, Quantity>>,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    for (name, quantity) in list.into_iter().flatten() {
        let entry = path.key(name);
        quota_resource_name(name, &entry, errs);
        quantity_value(name, quantity, &entry, errs);
    }
}

/// The standard resources capped, in name order.
fn standard_hard(spec: &ResourceQuotaSpec) -> Vec<&str> {
    spec.hard
        .iter()
        .flatten()
        .map(|(k, _)| k.as_str())
        .filter(|k| is_standard_quota(k))
        .collect()
}

/// The scope list as Go's `%#v` prints it.
struct GoScopes<'a>(Option<&'a [String]>);

impl fmt::Debug for GoScopes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let strings = format!("{:?}", GoStrings(self.0));
        let items = strings.strip_prefix("[]string").unwrap_or(&strings);
        write!(f, "[]core.ResourceQuotaScope{items}")
    }
}

/// The scope selector as Go's `%#v` prints it.
struct GoScopeSelector<'a>(&'a ScopeSelector);

impl fmt::Debug for GoScopeSelector<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = "core.ScopedResourceSelectorRequirement";
        f.write_str("core.ScopeSelector{MatchExpressions:")?;
        match &self.0.match_expressions {
            None => write!(f, "[]{kind}(nil)")?,
            Some(list) => {
                let items: Vec<String> = list
                    .iter()
                    .map(|r| {
                        format!(
                            "{kind}{{ScopeName:{:?}, Operator:{:?}, Values:{:?}}}",
                            r.scope_name,
                            r.operator,
                            GoStrings(r.values.as_deref())
                        )
                    })
                    .collect();
                write!(f, "[]{kind}{{{}}}", items.join(", "))?;
            }
        }
        f.write_str("}")
    }
}

/// The `ResourceQuotaSpec` hook.
pub(crate) fn validate_quota_spec(
    spec: &ResourceQuotaSpec,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    resource_list(spec.hard.as_ref(), &path.child("hard"), errs);
    scopes(spec, path, errs);
    if let Some(selector) = &spec.scope_selector {
        scope_selector(spec, selector, &path.child("scopeSelector"), errs);
    }
}

/// The `ResourceQuotaStatus` hook: written only through `/status` (a create
/// clears it, an update keeps the stored one).
pub(crate) fn validate_quota_status(
    status: &ResourceQuotaStatus,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    resource_list(status.hard.as_ref(), &path.child("hard"), errs);
    resource_list(status.used.as_ref(), &path.child("used"), errs);
}

/// Conflicting pairs among `set`.
fn conflicts(set: &BTreeSet<&str>) -> usize {
    CONFLICTS
        .iter()
        .filter(|(a, b)| set.contains(a) && set.contains(b))
        .count()
}

/// `validateResourceQuotaScopes`: every error names the whole list.
fn scopes(spec: &ResourceQuotaSpec, path: &FieldPath, errs: &mut FieldErrors) {
    let list = spec.scopes.as_deref().unwrap_or_default();
    if list.is_empty() {
        return;
    }
    let scopes_path = path.child("scopes");
    let shown = GoScopes(spec.scopes.as_deref());
    let hard = standard_hard(spec);
    for scope in list {
        if !SCOPES.contains(&scope.as_str()) {
            errs.invalid(scopes_path.clone(), &shown, "unsupported scope");
        }
        for _ in hard.iter().filter(|r| !scope_fits(scope, r)) {
            errs.invalid(
                scopes_path.clone(),
                &shown,
                "unsupported scope applied to resource",
            );
        }
    }
    let set: BTreeSet<&str> = list.iter().map(String::as_str).collect();
    for _ in 0..conflicts(&set) {
        errs.invalid(scopes_path.clone(), &shown, "conflicting scopes");
    }
}

/// `validateScopedResourceSelectorRequirement`. Upstream's paths name no
/// index: every expression reports under `matchExpressions` itself.
fn scope_selector(
    spec: &ResourceQuotaSpec,
    selector: &ScopeSelector,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let path = path.child("matchExpressions");
    let hard = standard_hard(spec);
    let mut set = BTreeSet::new();
    for req in selector.match_expressions.iter().flatten() {
        let scope = req.scope_name.as_str();
        if !SCOPES.contains(&scope) {
            errs.invalid(path.child("scopeName"), scope, "unsupported scope");
        }
        for _ in hard.iter().filter(|r| !scope_fits(scope, r)) {
            errs.invalid(
                path.clone(),
                GoScopeSelector(selector),
                "unsupported scope applied to resource",
            );
        }
        let operator = req.operator.as_str();
        if scope != "PriorityClass" && SCOPES.contains(&scope) && operator != "Exists" {
            errs.invalid(
                path.child("operator"),
                operator,
                "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, \
                 ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, \
                 ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
            );
        }
        let values = req.values.as_deref().unwrap_or_default();
        match operator {
            "In" | "NotIn" if values.is_empty() => errs.required(
                path.child("values"),
                "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
            ),
            "Exists" | "DoesNotExist" if !values.is_empty() => errs.invalid(
                path.child("values"),
                GoStrings(req.values.as_deref()),
                "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
            ),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => errs.invalid(
                path.child("operator"),
                other,
                "not a valid selector operator",
            ),
        }
        set.insert(scope);
    }
    // Upstream shows the `scopes` list here, not the selector.
    for _ in 0..conflicts(&set) {
        errs.invalid(
            path.clone(),
            GoScopes(spec.scopes.as_deref()),
            "conflicting scopes",
        );
    }
}

/// The `ResourceQuota` update hook: the set of scopes is immutable.
pub(crate) fn validate_quota_update(
    new: &ResourceQuota,
    old: &ResourceQuota,
    _path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let set = |q: &ResourceQuota| -> BTreeSet<String> {
        q.spec.scopes.iter().flatten().cloned().collect()
    };
    if set(new) != set(old) {
        errs.invalid(
            FieldPath::new("spec").child("scopes"),
            GoScopes(new.spec.scopes.as_deref()),
            "field is immutable",
        );
    }
}
