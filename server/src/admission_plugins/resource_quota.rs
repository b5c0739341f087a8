//! ResourceQuota (plugin/pkg/admission/resourcequota): a create that a
//! namespace's quotas cover is checked against each quota's `status.hard`
//! and charged to its `status.used` right before the object is stored (and
//! refunded when the store refuses it), as upstream's quota evaluators do.
//! Nothing gives usage back on delete: the quota controller recalculates it
//! (kube-controller-manager's; kapi has no built-in one). Quotas whose status the quota controller
//! has not filled yet constrain nothing (upstream reads the status, too); a
//! dry run is checked but charges nothing.
//!
//! Usage counted: objects (`count/<resource>[.<group>]` and the legacy names
//! `pods`, `services`, `configmaps`, `secrets`, `persistentvolumeclaims`,
//! `replicationcontrollers`, `resourcequotas`), a pod's requests and limits
//! of cpu, memory and ephemeral storage, a claim's requested storage (also
//! per StorageClass), a service's node ports and load balancers. A quota's
//! scopes (`Terminating`, `NotTerminating`, `BestEffort`, `NotBestEffort`,
//! and `PriorityClass` in a scope selector) limit it to the pods they match;
//! a quota with another scope (`CrossNamespacePodAffinity`,
//! `VolumeAttributesClass`) is not evaluated yet.

use std::collections::BTreeMap;

use kapi_api_types::core::v1::{Pod, ResourceQuota as Quota_};
use kapi_runtime::intstr::Quantity;

mod usage;

use super::limit_ranger::Amount;
use crate::admission::{Attributes, Quota, QuotaCharge};
use crate::api_error::ApiResult;
use crate::body::Object;
use crate::loopback::{self, Loopback};
use crate::scope::Scope;
use async_trait::async_trait;
use usage::{evaluated, usage_of};

/// A quota's amounts by resource name.
type Amounts = BTreeMap<String, Quantity>;

/// The resources a pod must request (or limit) in every container when a
/// quota constrains them: upstream's compatibility rule for cpu and memory.
const MUST_SPECIFY: &[&str] = &[
    "cpu",
    "limits.cpu",
    "limits.memory",
    "memory",
    "requests.cpu",
    "requests.memory",
];

/// What a create is to be charged: its usage, and the quotas it counts in.
/// Charged right before the object is stored (after every other check), and
/// refunded when the store refuses the object.
pub struct Charge<'a> {
    attrs: Attributes<'a>,
    usage: BTreeMap<String, Amount>,
    quotas: Vec<String>,
}

/// Checks a create against the namespace's `quotas` (as stored); answers
/// what to charge (nothing on a dry run or when no quota counts the object).
pub fn admit<'a>(
    attrs: &Attributes<'a>,
    quotas: &[Quota_],
    object: &Object,
    dry_run: bool,
) -> ApiResult<Option<Charge<'a>>> {
    let pod = object.downcast_ref::<Pod>();
    let quotas: Vec<&Quota_> = quotas.iter().filter(|q| evaluated(q, pod)).collect();
    let usage = usage_of(attrs.scope, object);
    for quota in &quotas {
        if let Some(pod) = pod {
            check_constraints(attrs, quota, pod)?;
        }
        check(attrs, quota, &usage)?;
    }
    let quotas: Vec<String> = quotas
        .into_iter()
        .filter(|quota| charged(quota, &usage))
        .filter_map(|quota| quota.metadata.name.clone())
        .collect();
    if dry_run || quotas.is_empty() {
        return Ok(None);
    }
    Ok(Some(Charge {
        attrs: attrs.clone(),
        usage,
        quotas,
    }))
}

#[async_trait::async_trait]
impl QuotaCharge for Charge<'_> {
    /// Adds the usage to each quota's `status.used`, checked again on the
    /// current status (another create may have been charged since it was
    /// read). All or nothing: a refusal refunds the quotas already charged.
    /// A quota deleted meanwhile constrains nothing any more.
    async fn charge(&self, objects: &dyn Loopback) -> ApiResult<()> {
        for (i, name) in self.quotas.iter().enumerate() {
            let charge = |current: &mut Quota_| {
                check(&self.attrs, current, &self.usage)?;
                current.status.used = Some(add_usage(current, &self.usage, 1));
                Ok(())
            };
            match self.edit(objects, name, &charge).await {
                Ok(()) => {}
                Err(e) if e.code() == 404 => {}
                Err(e) => {
                    self.refund_quotas(objects, &self.quotas[..i]).await;
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Takes the charge back (the object was not stored after all).
    async fn refund(&self, objects: &dyn Loopback) {
        self.refund_quotas(objects, &self.quotas).await;
    }
}

impl Charge<'_> {
    async fn refund_quotas(&self, objects: &dyn Loopback, quotas: &[String]) {
        for name in quotas {
            let refund = |current: &mut Quota_| {
                current.status.used = Some(add_usage(current, &self.usage, -1));
                Ok(())
            };
            if let Err(e) = self.edit(objects, name, &refund).await {
                tracing::warn!(quota = %name, error = ?e.0.message, "could not refund a quota");
            }
        }
    }

    async fn edit(
        &self,
        objects: &dyn Loopback,
        name: &str,
        change: &(dyn Fn(&mut Quota_) -> ApiResult<()> + Sync),
    ) -> ApiResult<()> {
        let namespace = self.attrs.namespace.as_deref();
        loopback::edit_status(objects, namespace, name, change).await
    }
}

fn hard(quota: &Quota_) -> Option<&Amounts> {
    quota.status.hard.as_ref()
}

/// The resources of `usage` a quota constrains.
fn constrained<'u>(quota: &Quota_, usage: &'u BTreeMap<String, Amount>) -> Vec<&'u String> {
    let hard = hard(quota);
    usage
        .keys()
        .filter(|name| hard.is_some_and(|h| h.contains_key(name.as_str())))
        .collect()
}

/// Whether a quota constrains anything of `usage`.
fn charged(quota: &Quota_, usage: &BTreeMap<String, Amount>) -> bool {
    !constrained(quota, usage).is_empty()
}

/// Every container of a pod must ask for the cpu and memory a quota
/// constrains.
fn check_constraints(attrs: &Attributes<'_>, quota: &Quota_, pod: &Pod) -> ApiResult<()> {
    let hard = hard(quota);
    let required: Vec<&str> = MUST_SPECIFY
        .iter()
        .copied()
        .filter(|name| hard.is_some_and(|h| h.contains_key(*name)))
        .collect();
    let mut missing: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let spec = &pod.spec;
    let containers = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten());
    for container in containers {
        let resources = &container.resources;
        let has = |name: &str| {
            let (list, resource) = match name.split_once('.') {
                Some(("limits", resource)) => (&resources.limits, resource),
                Some((_, resource)) => (&resources.requests, resource),
                None => (&resources.requests, name),
            };
            list.as_ref().is_some_and(|l| l.contains_key(resource))
        };
        for name in required.iter().copied().filter(|name| !has(name)) {
            let names = missing.entry(name).or_default();
            if !names.contains(&container.name) {
                names.push(container.name.clone());
            }
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = missing
        .into_iter()
        .map(|(name, mut containers)| {
            containers.sort();
            format!("{name} for: {}", containers.join(","))
        })
        .collect();
    let quota_name = quota.metadata.name.as_deref().unwrap_or_default();
    Err(attrs.forbidden(&format!(
        "failed quota: {quota_name}: must specify {}",
        list.join("; ")
    )))
}

/// Refuses usage that would exceed a quota (given as the stored object).
fn check(
    attrs: &Attributes<'_>,
    quota: &Quota_,
    usage: &BTreeMap<String, Amount>,
) -> ApiResult<()> {
    let name = quota.metadata.name.as_deref().unwrap_or_default();
    let resources = constrained(quota, usage);
    if resources.is_empty() {
        return Ok(());
    }
    let empty = Amounts::new();
    let used = quota.status.used.as_ref().unwrap_or(&empty);
    if resources.iter().any(|r| !used.contains_key(r.as_str())) {
        let names: Vec<&str> = resources.iter().map(|r| r.as_str()).collect();
        return Err(attrs.forbidden(&format!(
            "status unknown for quota: {name}, resources: {}",
            names.join(",")
        )));
    }
    let hard = hard(quota).unwrap_or(&empty);
    let amount = |amounts: &Amounts, r: &str| Amount::of_text(&amounts.get(r)?.0);
    let exceeded: Vec<&String> = resources
        .into_iter()
        .filter(|r| {
            let (Some(used), Some(hard)) = (amount(used, r), amount(hard, r)) else {
                return false;
            };
            used.milli + usage[*r].milli > hard.milli
        })
        .collect();
    if exceeded.is_empty() {
        return Ok(());
    }
    let print = |value: &dyn Fn(&str) -> String| {
        exceeded
            .iter()
            .map(|r| format!("{r}={}", value(r)))
            .collect::<Vec<_>>()
            .join(",")
    };
    let text = |amounts: &Amounts, r: &str| amounts.get(r).map(|q| q.0.clone()).unwrap_or_default();
    Err(attrs.forbidden(&format!(
        "exceeded quota: {name}, requested: {}, used: {}, limited: {}",
        print(&|r| usage[r].text.clone()),
        print(&|r| text(used, r)),
        print(&|r| text(hard, r)),
    )))
}

/// A quota's `status.used` with `usage` added (`sign` 1) or taken back
/// (-1, never below zero) to what it constrains: a sum is written in the
/// suffixes of what was used, or of the usage when nothing was.
fn add_usage(quota: &Quota_, usage: &BTreeMap<String, Amount>, sign: i128) -> Amounts {
    let mut used = quota.status.used.clone().unwrap_or_default();
    for resource in constrained(quota, usage) {
        let Some(before) = used
            .get(resource.as_str())
            .and_then(|q| Amount::of_text(&q.0))
        else {
            continue;
        };
        let added = &usage[resource];
        let binary = if before.milli == 0 {
            added.text.ends_with('i')
        } else {
            before.text.ends_with('i')
        };
        let sum = Amount::from_milli((before.milli + sign * added.milli).max(0), binary);
        used.insert(resource.clone(), Quantity(sum.text));
    }
    used
}

/// ResourceQuota, the quota stage of a create (after the chain): the charge
/// to make right before the object is stored, when a quota of its namespace
/// constrains it.
pub struct ResourceQuota;

#[async_trait]
impl Quota for ResourceQuota {
    async fn reserve<'a>(
        &self,
        objects: &dyn Loopback,
        scope: Scope<'a>,
        object: &Object,
        dry_run: bool,
    ) -> ApiResult<Option<Box<dyn QuotaCharge + 'a>>> {
        let attrs = Attributes {
            scope,
            name: object.metadata().name().to_owned(),
            namespace: object.metadata().namespace.clone(),
        };
        let Some(ns) = attrs.namespace.as_deref() else {
            return Ok(None);
        };
        // Most namespaces have no quota: the object is not looked at then.
        let quotas = loopback::list::<Quota_>(objects, Some(ns)).await?;
        if quotas.is_empty() {
            return Ok(None);
        }
        let charge = admit(&attrs, &quotas, object, dry_run)?;
        Ok(charge.map(|c| Box::new(c) as Box<dyn QuotaCharge + 'a>))
    }
}
