//! Service ClusterIPs and NodePorts, allocated as kube-apiserver allocates
//! them: from `--service-cluster-ip-range` and `--service-node-port-range`,
//! each a bitmap kept in the store (`/registry/ranges/serviceips`,
//! `/registry/ranges/servicenodeports`, RangeAllocation objects as upstream
//! keeps them) and changed by optimistic read-modify-write, so several
//! replicas on one etcd never hand out the same address.
//!
//! A create takes what the Service needs before it is stored and gives it
//! back when the write fails; a delete gives back what the Service held; an
//! update takes and gives back the difference (type changes, ports).
//!
//! The Service is read and changed through its JSON form: the server crate
//! knows kinds only through the scheme.

use std::fmt;
use std::net::IpAddr;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use kapi_api_types::core::v1::Service;
use kapi_api_types::core::v1::service::ServiceSpec;
use kapi_runtime::proto::envelope;
use kapi_runtime::proto::wire::{Reader, put_bytes};
use kapi_runtime::validation::{FieldErrors, FieldPath};
use kapi_storage::{Storage, StorageError, Update};
use serde_json::{Value, json};

use crate::api_error::{ApiError, ApiResult};

/// Where the ClusterIP bitmap lives.
pub(super) const IPS_KEY: &str = "/registry/ranges/serviceips";
/// Where the NodePort bitmap lives.
pub(super) const PORTS_KEY: &str = "/registry/ranges/servicenodeports";

/// The ranges Services are given addresses and ports from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceRanges {
    /// The network ClusterIPs come from.
    pub cluster_ips: IpRange,
    /// The first and last NodePort.
    pub node_ports: (u16, u16),
}

impl Default for ServiceRanges {
    fn default() -> ServiceRanges {
        ServiceRanges {
            cluster_ips: IpRange {
                base: IpAddr::from([10, 96, 0, 0]),
                prefix: 12,
            },
            node_ports: (30000, 32767),
        }
    }
}

impl ServiceRanges {
    /// The address of the `kubernetes` Service: the range's first.
    pub fn first_ip(&self) -> IpAddr {
        self.cluster_ips.address(0)
    }
}

/// A CIDR, e.g. `10.96.0.0/12`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpRange {
    base: IpAddr,
    prefix: u8,
}

impl std::str::FromStr for IpRange {
    type Err = String;

    fn from_str(text: &str) -> Result<IpRange, String> {
        let (ip, prefix) = text
            .split_once('/')
            .ok_or_else(|| format!("{text:?} is not a CIDR (e.g. 10.96.0.0/12)"))?;
        let ip: IpAddr = ip
            .parse()
            .map_err(|_| format!("{ip:?} is not an IP address"))?;
        let prefix: u8 = prefix
            .parse()
            .map_err(|_| format!("{prefix:?} is not a prefix length"))?;
        let bits = if ip.is_ipv4() { 32 } else { 128 };
        // Upstream refuses ranges with fewer than 8 addresses.
        if prefix > bits - 3 || prefix < bits.saturating_sub(108).max(1) {
            return Err(format!(
                "{text}: the prefix length must be between {} and {}",
                bits.saturating_sub(108).max(1),
                bits - 3
            ));
        }
        let base = mask(ip, prefix);
        Ok(IpRange { base, prefix })
    }
}

impl fmt::Display for IpRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.base, self.prefix)
    }
}

fn to_u128(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

fn mask(ip: IpAddr, prefix: u8) -> IpAddr {
    let bits: u32 = if ip.is_ipv4() { 32 } else { 128 };
    let host_bits = bits - u32::from(prefix);
    let value = to_u128(ip) >> host_bits << host_bits;
    from_u128(ip.is_ipv4(), value)
}

fn from_u128(v4: bool, value: u128) -> IpAddr {
    if v4 {
        IpAddr::from(u32::try_from(value).unwrap_or(u32::MAX).to_be_bytes())
    } else {
        IpAddr::from(value.to_be_bytes())
    }
}

impl IpRange {
    /// How many addresses can be handed out, as upstream's ipallocator
    /// counts them: all but the network address (and, for IPv4, the
    /// broadcast address), an IPv6 range capped at 65,536 before that.
    fn size(&self) -> usize {
        let all = usize::try_from(self.cidr_size()).unwrap_or(usize::MAX);
        if self.base.is_ipv4() {
            all - 2
        } else {
            all.min(1 << 16) - 1
        }
    }

    /// How many addresses the CIDR holds (saturating).
    fn cidr_size(&self) -> u128 {
        let bits: u32 = if self.base.is_ipv4() { 32 } else { 128 };
        let host_bits = bits - u32::from(self.prefix);
        1u128.checked_shl(host_bits).unwrap_or(u128::MAX)
    }

    fn address(&self, offset: usize) -> IpAddr {
        from_u128(self.base.is_ipv4(), to_u128(self.base) + 1 + offset as u128)
    }

    fn offset(&self, ip: IpAddr) -> Option<usize> {
        if ip.is_ipv4() != self.base.is_ipv4() {
            return None;
        }
        let offset = to_u128(ip).checked_sub(to_u128(self.base) + 1)?;
        usize::try_from(offset).ok().filter(|o| *o < self.size())
    }

    /// `IPv4` or `IPv6`.
    fn family(&self) -> &'static str {
        if self.base.is_ipv4() { "IPv4" } else { "IPv6" }
    }
}

/// Why an allocation failed.
enum Refusal {
    OutOfRange,
    Taken,
    Full,
}

/// One bitmap of taken offsets, kept as upstream keeps it: a v1
/// `RangeAllocation` whose `range` names the range and whose `data` is Go's
/// `big.Int.Bytes()` of the bitmap (offset *o* is bit *o* of the integer:
/// big-endian, without leading zero bytes). In memory bit *o* is in byte
/// `o / 8`.
struct Bitmap {
    bits: Vec<u8>,
    size: usize,
}

/// A stored RangeAllocation: its range text and bitmap data.
struct Stored<'a> {
    range: std::borrow::Cow<'a, str>,
    data: std::borrow::Cow<'a, [u8]>,
}

impl<'a> Stored<'a> {
    /// Reads a RangeAllocation written as protobuf (the `k8s\0` envelope)
    /// or JSON.
    fn read(bytes: &'a [u8]) -> Result<Stored<'a>, String> {
        if bytes.starts_with(envelope::MAGIC) {
            let unknown = envelope::decode(bytes).map_err(|e| e.to_string())?;
            if unknown.kind != "RangeAllocation" {
                return Err(format!(
                    "a {} where a RangeAllocation is kept",
                    unknown.kind
                ));
            }
            let mut reader = Reader::new(unknown.raw);
            let (mut range, mut data) = (&b""[..], &b""[..]);
            while !reader.is_empty() {
                let (number, wire) = reader.key().map_err(|e| e.to_string())?;
                match number {
                    2 => range = reader.len_delimited().map_err(|e| e.to_string())?,
                    3 => data = reader.len_delimited().map_err(|e| e.to_string())?,
                    _ => reader.skip(wire).map_err(|e| e.to_string())?,
                }
            }
            let range = std::str::from_utf8(range).map_err(|e| e.to_string())?;
            return Ok(Stored {
                range: range.into(),
                data: data.into(),
            });
        }
        let value: Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        let data = match value["data"].as_str() {
            Some(data) => STANDARD.decode(data).map_err(|e| e.to_string())?,
            None => Vec::new(),
        };
        Ok(Stored {
            range: value["range"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
                .into(),
            data: data.into(),
        })
    }
}

impl Bitmap {
    fn empty(size: usize) -> Bitmap {
        Bitmap {
            bits: vec![0; size.div_ceil(8)],
            size,
        }
    }

    /// The bitmap kept under `range`, as upstream's Restore reads it: a
    /// stored range other than ours is an error, as two servers must not
    /// share a bitmap over different ranges.
    fn decode(stored: &[u8], range: &str, size: usize) -> Result<Bitmap, String> {
        let stored = Stored::read(stored)?;
        if !stored.range.is_empty() && stored.range != range {
            return Err("the provided range does not match the current range".into());
        }
        let mut bitmap = Bitmap::empty(size);
        // Big-endian: the last byte holds offsets 0..8.
        for (i, byte) in stored.data.iter().rev().enumerate() {
            match bitmap.bits.get_mut(i) {
                Some(b) => *b = *byte,
                None if *byte == 0 => {}
                None => return Err("the stored bitmap is larger than the range".into()),
            }
        }
        Ok(bitmap)
    }

    /// The bitmap's data as upstream stores it (big-endian, no leading
    /// zero bytes; empty when nothing is taken).
    fn data(&self) -> Vec<u8> {
        let used = self.bits.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1);
        self.bits[..used].iter().rev().copied().collect()
    }

    /// The RangeAllocation to store: protobuf in the envelope, or JSON when
    /// objects are stored as JSON.
    fn encode(&self, range: &str, json: bool) -> Bytes {
        let data = self.data();
        if json {
            let object = json!({"kind": "RangeAllocation", "apiVersion": "v1",
                "metadata": {"creationTimestamp": null}, "range": range,
                "data": STANDARD.encode(&data)});
            return Bytes::from(object.to_string());
        }
        let mut raw = Vec::with_capacity(range.len() + data.len() + 8);
        put_bytes(&mut raw, 1, &[]);
        put_bytes(&mut raw, 2, range.as_bytes());
        put_bytes(&mut raw, 3, &data);
        Bytes::from(envelope::encode("v1", "RangeAllocation", &raw))
    }

    fn is_set(&self, i: usize) -> bool {
        self.bits
            .get(i / 8)
            .is_some_and(|b| b & (1 << (i % 8)) != 0)
    }

    fn set(&mut self, i: usize, on: bool) {
        if let Some(b) = self.bits.get_mut(i / 8) {
            if on {
                *b |= 1 << (i % 8);
            } else {
                *b &= !(1 << (i % 8));
            }
        }
    }

    /// A free offset as upstream's randomScanStrategyWithOffset finds one:
    /// from a random point of the upper band `[reserved, size)`, wrapping
    /// inside it (the lower band is left to requested values), then from a
    /// random point of the lower band.
    fn free(&self, reserved: usize) -> Option<usize> {
        let reserved = reserved.min(self.size);
        let scan = |from: usize, len: usize| {
            if len == 0 {
                return None;
            }
            let start = (uuid::Uuid::new_v4().as_u128() % len as u128) as usize;
            (0..len)
                .map(|i| from + (start + i) % len)
                .find(|i| !self.is_set(*i))
        };
        scan(reserved, self.size - reserved).or_else(|| scan(0, reserved))
    }
}

/// The lower band left to requested values (upstream's
/// calculateRangeOffset): none for a range of at most 16, else
/// `size / step` between 16 and `cap`. `size` is the whole CIDR's for
/// addresses, the range's for ports.
fn reserved(size: u128, step: u128, cap: u128) -> usize {
    if size <= 16 {
        return 0;
    }
    usize::try_from((size / step).clamp(16, cap)).unwrap_or(0)
}

/// One change to the two bitmaps: what to take (a value, or any free one)
/// and what to give back.
#[derive(Default, Debug)]
struct Change {
    take_ips: Vec<Option<IpAddr>>,
    take_ports: Vec<Option<u16>>,
    give_ips: Vec<IpAddr>,
    give_ports: Vec<u16>,
}

/// What a Service holds (or a request took): given back on delete or failure.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Held {
    ips: Vec<IpAddr>,
    ports: Vec<u16>,
}

impl Held {
    fn is_empty(&self) -> bool {
        self.ips.is_empty() && self.ports.is_empty()
    }
}

/// The allocators over one store.
#[derive(Clone, Debug, Default)]
pub struct ServiceAllocator {
    ranges: ServiceRanges,
    /// Whether the bitmaps are written as JSON (objects are stored as JSON)
    /// rather than protobuf.
    json: bool,
}

impl ServiceAllocator {
    /// Allocators over `ranges`, writing their bitmaps as protobuf.
    pub fn new(ranges: ServiceRanges) -> ServiceAllocator {
        ServiceAllocator {
            ranges,
            json: false,
        }
    }

    /// Writes the bitmaps as JSON, as Services are written
    /// (`--storage-media-type=application/json`).
    pub fn with_json(mut self, json: bool) -> ServiceAllocator {
        self.json = json;
        self
    }

    /// Gives the new Service (defaulted and validated) its IP family fields,
    /// ClusterIP, NodePorts and health check port, taking them in the store
    /// (unless `dry_run`). Returns what was taken, to give back if the
    /// create fails.
    pub async fn allocate_create(
        &self,
        storage: &dyn Storage,
        name: &str,
        service: &mut Service,
        dry_run: bool,
    ) -> ApiResult<Held> {
        let spec = &mut service.spec;
        self.init_ip_families(name, spec, None)?;
        let ip_slot = self.wants_cluster_ip(spec)?;
        let health = needs_health_check(spec);
        let taken = self
            .take(storage, name, spec, (ip_slot, None, health), dry_run)
            .await?;
        Ok(if dry_run { Held::default() } else { taken })
    }

    /// What a stored Service holds.
    pub fn held(&self, service: &Service) -> Held {
        let spec = &service.spec;
        let ips = spec
            .cluster_ips
            .iter()
            .flatten()
            .filter_map(|ip| ip.parse().ok())
            .filter(|ip| self.ranges.cluster_ips.offset(*ip).is_some())
            .collect();
        let mut ports: Vec<u16> = spec
            .ports
            .iter()
            .flatten()
            .filter_map(|p| u16::try_from(p.node_port?).ok())
            .chain(u16::try_from(spec.health_check_node_port.unwrap_or(0)).ok())
            .filter(|p| *p != 0)
            .collect();
        ports.sort_unstable();
        ports.dedup();
        Held { ips, ports }
    }

    /// Gives back what a deleted Service or a failed request held.
    pub async fn release(&self, storage: &dyn Storage, held: &Held) {
        if held.is_empty() {
            return;
        }
        let change = Change {
            give_ips: held.ips.clone(),
            give_ports: held.ports.clone(),
            ..Change::default()
        };
        if let Err(e) = self.apply(storage, "", &change, false, &[]).await {
            tracing::warn!(error = ?e.0.message, "could not release service addresses");
        }
    }

    /// An update of `old` to `new`: the IP family fields, then what the new
    /// Service needs that the old did not hold is taken, and what it no
    /// longer holds is returned in the second [`Held`] (given back by the
    /// caller once the update is stored).
    pub async fn allocate_update(
        &self,
        storage: &dyn Storage,
        name: &str,
        old: &Service,
        new: &mut Service,
        dry_run: bool,
    ) -> ApiResult<(Held, Held)> {
        let old_spec = &old.spec;
        self.init_ip_families(name, &mut new.spec, Some(old_spec))?;
        let old_held = self.held(old);
        let old_type = service_type(old_spec);
        let new_type = service_type(&new.spec);
        let ip_slot = if old_type == "ExternalName" && new_type != "ExternalName" {
            self.wants_cluster_ip(&new.spec)?
        } else {
            None
        };
        let health = needs_health_check(&new.spec) && !needs_health_check(old_spec);
        let taken = self
            .take(
                storage,
                name,
                &mut new.spec,
                (ip_slot, Some(&old_held.ports), health),
                dry_run,
            )
            .await?;
        let new_held = self.held(new);
        let freed = Held {
            ips: old_held
                .ips
                .iter()
                .filter(|ip| !new_held.ips.contains(ip))
                .copied()
                .collect(),
            ports: old_held
                .ports
                .iter()
                .filter(|p| !new_held.ports.contains(p))
                .copied()
                .collect(),
        };
        let taken = if dry_run { Held::default() } else { taken };
        Ok((taken, freed))
    }

    /// Takes what `spec` asks for in the store: the ClusterIP (`ip`: any or a
    /// requested one), NodePorts for the ports that have none or a new one
    /// (`held` are kept), and a health check port; writes them into `spec`.
    async fn take(
        &self,
        storage: &dyn Storage,
        name: &str,
        spec: &mut ServiceSpec,
        (ip, held, health): (Option<Option<IpAddr>>, Option<&[u16]>, bool),
        dry_run: bool,
    ) -> ApiResult<Held> {
        let mut wanted = Change::default();
        wanted.take_ips.extend(ip);
        let port_slots = node_port_slots(spec, held);
        wanted
            .take_ports
            .extend(port_slots.iter().map(|slot| slot.requested));
        if health {
            wanted
                .take_ports
                .push(requested_port(spec.health_check_node_port));
        }
        let taken = self
            .apply(storage, name, &wanted, dry_run, &port_slots)
            .await?;
        let mut ports = taken.ports.iter().copied();
        if ip.is_some()
            && let Some(ip) = taken.ips.first()
        {
            spec.cluster_ip = Some(ip.to_string());
            spec.cluster_ips = Some(vec![ip.to_string()]);
        }
        fill_node_ports(spec, &port_slots, &mut ports);
        if health && let Some(port) = ports.next() {
            spec.health_check_node_port = Some(i32::from(port));
        }
        Ok(taken)
    }

    /// Upstream's initIPFamilyFields for a single-family cluster.
    fn init_ip_families(
        &self,
        name: &str,
        spec: &mut ServiceSpec,
        old: Option<&ServiceSpec>,
    ) -> ApiResult<()> {
        if service_type(spec) == "ExternalName" {
            return Ok(());
        }
        let cluster = self.ranges.cluster_ips.family();
        let headless_selectorless = spec.cluster_ip.as_deref() == Some("None")
            && spec.selector.as_ref().is_none_or(|s| s.is_empty());
        if spec.ip_family_policy.is_none() {
            let policy = match old.and_then(|o| o.ip_family_policy.clone()) {
                Some(policy) => policy,
                None if headless_selectorless => "RequireDualStack".to_owned(),
                None => "SingleStack".to_owned(),
            };
            spec.ip_family_policy = Some(policy);
        }
        let policy = spec.ip_family_policy.clone().unwrap_or_default();
        let mut families: Vec<String> = spec.ip_families.clone().unwrap_or_default();
        let cluster_ips = spec.cluster_ips.clone().unwrap_or_default();
        let mut errors = FieldErrors::default();
        let path = || FieldPath::new("spec");
        if policy == "SingleStack" {
            if cluster_ips.len() == 2 {
                errors.invalid(
                    path().child("ipFamilyPolicy"),
                    &policy,
                    "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified",
                );
            }
            if families.len() == 2 {
                errors.invalid(
                    path().child("ipFamilyPolicy"),
                    &policy,
                    "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
                );
            }
        }
        for (i, ip) in cluster_ips.iter().enumerate() {
            if ip == "None" {
                break;
            }
            let family = match ip.parse::<IpAddr>() {
                Ok(IpAddr::V4(_)) => "IPv4",
                Ok(IpAddr::V6(_)) => "IPv6",
                Err(_) => break,
            };
            if i >= families.len() {
                if family == cluster {
                    families.push(family.to_owned());
                } else {
                    errors.invalid(
                        path().child("clusterIPs").index(i),
                        GoStrings(&cluster_ips),
                        &format!("{family} is not configured on this cluster"),
                    );
                }
            }
        }
        if !errors.is_empty() {
            return Err(ApiError::invalid("", "Service", name, &errors));
        }
        if headless_selectorless {
            if families.is_empty() {
                families.push(cluster.to_owned());
            }
            if families.len() < 2 && policy != "SingleStack" {
                let other = if families[0] == "IPv4" {
                    "IPv6"
                } else {
                    "IPv4"
                };
                families.push(other.to_owned());
            }
            spec.ip_families = Some(families);
            return Ok(());
        }
        if policy == "RequireDualStack" {
            errors.invalid(
                path().child("ipFamilyPolicy"),
                &policy,
                "this cluster is not configured for dual-stack services",
            );
        }
        for (i, family) in families.iter().enumerate() {
            if family != cluster {
                errors.invalid(
                    path().child("ipFamilies").index(i),
                    family,
                    "not configured on this cluster",
                );
            }
        }
        if !errors.is_empty() {
            return Err(ApiError::invalid("", "Service", name, &errors));
        }
        if families.is_empty() {
            families.push(cluster.to_owned());
        }
        spec.ip_families = Some(families);
        Ok(())
    }

    /// `Some(requested)` when the Service needs a ClusterIP (`None` inside:
    /// any), `None` when it takes none (ExternalName, headless).
    fn wants_cluster_ip(&self, spec: &ServiceSpec) -> ApiResult<Option<Option<IpAddr>>> {
        if service_type(spec) == "ExternalName" {
            return Ok(None);
        }
        match spec.cluster_ip.as_deref().unwrap_or_default() {
            "None" => Ok(None),
            "" => Ok(Some(None)),
            ip => ip
                .parse()
                .map(|ip| Some(Some(ip)))
                .map_err(|_| ApiError::internal(format!("failed to parse service IP {ip:?}"))),
        }
    }

    /// Takes and gives back in the two bitmaps, all or nothing per bitmap:
    /// a refused value aborts with upstream's error and takes nothing.
    async fn apply(
        &self,
        storage: &dyn Storage,
        name: &str,
        change: &Change,
        dry_run: bool,
        port_slots: &[PortSlot],
    ) -> ApiResult<Held> {
        let range = self.ranges.cluster_ips;
        let ips = if change.take_ips.is_empty() && change.give_ips.is_empty() {
            Vec::new()
        } else {
            let size = range.size();
            let reserve = reserved(range.cidr_size(), 16, 256);
            let offsets: Vec<usize> = change
                .give_ips
                .iter()
                .filter_map(|ip| range.offset(*ip))
                .collect();
            let wanted: Vec<Option<Option<usize>>> = change
                .take_ips
                .iter()
                .map(|ip| ip.map(|ip| range.offset(ip)))
                .collect();
            let result = update_bitmap(
                storage,
                self.json,
                IPS_KEY,
                &range.to_string(),
                size,
                reserve,
                &wanted,
                &offsets,
                dry_run,
            )
            .await?;
            match result {
                Ok(taken) => taken.into_iter().map(|o| range.address(o)).collect(),
                Err((i, refusal)) => {
                    let ip = change.take_ips[i]
                        .map(|ip| ip.to_string())
                        .unwrap_or_default();
                    return Err(match refusal {
                        Refusal::Full => {
                            ApiError::internal("failed to allocate a serviceIP: range is full")
                        }
                        Refusal::OutOfRange => ip_refusal(
                            name,
                            &ip,
                            &format!(
                                "the provided IP ({ip}) is not in the valid range. The range of valid IPs is {range}"
                            ),
                        ),
                        Refusal::Taken => ip_refusal(name, &ip, "provided IP is already allocated"),
                    });
                }
            }
        };
        let (first, last) = self.ranges.node_ports;
        let size = usize::from(last - first) + 1;
        let ports = if change.take_ports.is_empty() && change.give_ports.is_empty() {
            Vec::new()
        } else {
            let reserve = reserved(size as u128, 32, 128);
            let to_offset = |p: u16| (first..=last).contains(&p).then(|| usize::from(p - first));
            let offsets: Vec<usize> = change
                .give_ports
                .iter()
                .filter_map(|p| to_offset(*p))
                .collect();
            let wanted: Vec<Option<Option<usize>>> =
                change.take_ports.iter().map(|p| p.map(to_offset)).collect();
            let range_text = format!("{first}-{last}");
            let result = update_bitmap(
                storage,
                self.json,
                PORTS_KEY,
                &range_text,
                size,
                reserve,
                &wanted,
                &offsets,
                dry_run,
            )
            .await;
            let result = match result {
                Ok(result) => result,
                Err(e) => {
                    self.release_ips_after_failure(storage, &ips, dry_run).await;
                    return Err(e);
                }
            };
            match result {
                Ok(taken) => taken
                    .into_iter()
                    .map(|o| first + u16::try_from(o).unwrap_or(0))
                    .collect(),
                Err((i, refusal)) => {
                    self.release_ips_after_failure(storage, &ips, dry_run).await;
                    let requested = change.take_ports[i].unwrap_or(0);
                    let field = port_slots
                        .get(i)
                        .map(|s| {
                            FieldPath::new("spec")
                                .child("ports")
                                .index(s.index)
                                .child("nodePort")
                        })
                        .unwrap_or_else(|| FieldPath::new("spec").child("healthCheckNodePort"));
                    return Err(match refusal {
                        Refusal::Full => {
                            ApiError::internal("failed to allocate a nodePort: range is full")
                        }
                        Refusal::OutOfRange => port_refusal(
                            name,
                            field,
                            requested,
                            &format!(
                                "provided port is not in the valid range. The range of valid ports is {first}-{last}"
                            ),
                        ),
                        Refusal::Taken => port_refusal(
                            name,
                            field,
                            requested,
                            "provided port is already allocated",
                        ),
                    });
                }
            }
        };
        Ok(Held { ips, ports })
    }

    /// Gives back the ClusterIPs a request took when its NodePorts failed.
    async fn release_ips_after_failure(
        &self,
        storage: &dyn Storage,
        ips: &[IpAddr],
        dry_run: bool,
    ) {
        if dry_run || ips.is_empty() {
            return;
        }
        let range = self.ranges.cluster_ips;
        let size = range.size();
        let offsets: Vec<usize> = ips.iter().filter_map(|ip| range.offset(*ip)).collect();
        let given = update_bitmap(
            storage,
            self.json,
            IPS_KEY,
            &range.to_string(),
            size,
            0,
            &[],
            &offsets,
            false,
        )
        .await;
        if let Err(e) = given {
            tracing::warn!(error = ?e.0.message, "could not release service addresses");
        }
    }
}

/// How many repairs in a row must find an offset taken by no Service before
/// it is given back (upstream's numRepairsBeforeLeakCleanup): a Service
/// being created holds its address before it is stored.
const REPAIRS_BEFORE_LEAK_CLEANUP: u8 = 3;

/// Offsets found taken by no Service, and how many more repairs must find
/// them so before they are given back.
#[derive(Debug, Default)]
pub struct Leaks {
    ips: std::collections::HashMap<usize, u8>,
    ports: std::collections::HashMap<usize, u8>,
}

impl ServiceAllocator {
    /// Upstream's repair controllers (one run): both bitmaps rebuilt from
    /// the Services stored, so that an address held by a Service is always
    /// marked (after a restore, a move, or a server that wrote without
    /// marking) and one held by none is given back after
    /// [`REPAIRS_BEFORE_LEAK_CLEANUP`] runs. A bitmap kept over another
    /// range (the flag changed) is rebuilt over this server's, as upstream's
    /// repair does; between repairs, allocations refuse a bitmap of another
    /// range, as upstream's allocator does.
    pub async fn repair(
        &self,
        storage: &dyn Storage,
        services: &[Service],
        leaks: &mut Leaks,
    ) -> Result<(), String> {
        let range = self.ranges.cluster_ips;
        let (first, last) = self.ranges.node_ports;
        let mut ips = Vec::new();
        let mut ports = Vec::new();
        for service in services {
            let held = self.held(service);
            ips.extend(held.ips.iter().filter_map(|ip| range.offset(*ip)));
            ports.extend(
                held.ports
                    .iter()
                    .filter(|p| (first..=last).contains(*p))
                    .map(|p| usize::from(p - first)),
            );
        }
        let port_size = usize::from(last - first) + 1;
        let ip_text = range.to_string();
        let port_text = format!("{first}-{last}");
        let ip_result = rebuild_bitmap(
            storage,
            self.json,
            IPS_KEY,
            &ip_text,
            range.size(),
            &ips,
            &mut leaks.ips,
        )
        .await;
        let port_result = rebuild_bitmap(
            storage,
            self.json,
            PORTS_KEY,
            &port_text,
            port_size,
            &ports,
            &mut leaks.ports,
        )
        .await;
        ip_result.and(port_result)
    }
}

/// Writes the bitmap under `key` afresh with `held` set, keeping offsets
/// the stored one has that no Service holds until they leaked long enough.
async fn rebuild_bitmap(
    storage: &dyn Storage,
    json: bool,
    key: &str,
    range: &str,
    size: usize,
    held: &[usize],
    leaks: &mut std::collections::HashMap<usize, u8>,
) -> Result<(), String> {
    let stored = storage.get(key).await.map_err(|e| e.to_string())?;
    let mut fresh = Bitmap::empty(size);
    for offset in held {
        fresh.set(*offset, true);
    }
    let mut still_leaking = std::collections::HashMap::new();
    // A bitmap kept over another range (the flag changed) or unreadable is
    // replaced by the one rebuilt over this server's range, as upstream's
    // repair blasts its rebuilt state into storage: its offsets mean other
    // addresses, so none of them is kept as a leak.
    let old = stored.as_ref().and_then(|kv| match Bitmap::decode(&kv.value, range, size) {
        Ok(old) => Some(old),
        Err(e) => {
            tracing::warn!(key, error = %e, "the stored bitmap is rebuilt over the configured range");
            None
        }
    });
    if let Some(old) = old {
        let leaked: Vec<usize> = (0..size)
            .filter(|o| old.is_set(*o) && !fresh.is_set(*o))
            .collect();
        for offset in leaked {
            let left = leaks
                .get(&offset)
                .copied()
                .unwrap_or(REPAIRS_BEFORE_LEAK_CLEANUP)
                .saturating_sub(1);
            if left > 0 {
                fresh.set(offset, true);
                still_leaking.insert(offset, left);
            } else {
                tracing::info!(
                    key,
                    offset,
                    "an allocated value no Service holds is given back"
                );
            }
        }
    }
    *leaks = still_leaking;
    let bytes = fresh.encode(range, json);
    let written = match &stored {
        Some(kv) if kv.value == bytes => return Ok(()),
        Some(kv) => storage.update(key, bytes, kv.mod_revision).await,
        None => storage.create(key, bytes).await,
    };
    match written {
        // Changed meanwhile by an allocation: the next run looks again.
        Ok(_) | Err(StorageError::Conflict(_) | StorageError::AlreadyExists(_)) => Ok(()),
        Err(e) => Err(format!("{key}: {e}")),
    }
}

/// Reads, changes and writes one bitmap: the offsets taken (in the order
/// asked), or the index of the first refused request.
#[allow(clippy::too_many_arguments)]
async fn update_bitmap(
    storage: &dyn Storage,
    json: bool,
    key: &str,
    range: &str,
    size: usize,
    reserve: usize,
    take: &[Option<Option<usize>>],
    give: &[usize],
    dry_run: bool,
) -> ApiResult<Result<Vec<usize>, (usize, Refusal)>> {
    let mut outcome = None;
    let result = storage
        .guaranteed_update(key, &mut |current| {
            let mut bitmap = match current {
                Some(kv) => Bitmap::decode(&kv.value, range, size)
                    .map_err(|e| StorageError::Internal(format!("{key}: {e}")))?,
                None => Bitmap::empty(size),
            };
            for offset in give {
                bitmap.set(*offset, false);
            }
            let mut taken = Vec::with_capacity(take.len());
            for (i, wanted) in take.iter().enumerate() {
                let offset = match wanted {
                    Some(None) => {
                        outcome = Some(Err((i, Refusal::OutOfRange)));
                        return Ok(Update::Keep);
                    }
                    Some(Some(offset)) if bitmap.is_set(*offset) => {
                        outcome = Some(Err((i, Refusal::Taken)));
                        return Ok(Update::Keep);
                    }
                    Some(Some(offset)) => *offset,
                    None => match bitmap.free(reserve) {
                        Some(offset) => offset,
                        None => {
                            outcome = Some(Err((i, Refusal::Full)));
                            return Ok(Update::Keep);
                        }
                    },
                };
                bitmap.set(offset, true);
                taken.push(offset);
            }
            outcome = Some(Ok(taken));
            if dry_run {
                Ok(Update::Keep)
            } else {
                Ok(Update::Write(bitmap.encode(range, json)))
            }
        })
        .await;
    result.map_err(|e: StorageError| ApiError::internal(e))?;
    outcome.ok_or_else(|| ApiError::internal("allocation did not run"))
}

fn ip_refusal(name: &str, ip: &str, why: &str) -> ApiError {
    let mut errors = FieldErrors::default();
    errors.invalid(
        FieldPath::new("spec").child("clusterIPs"),
        GoStrings(&[ip.to_owned()]),
        &format!("failed to allocate IP {ip}: {why}"),
    );
    ApiError::invalid("", "Service", name, &errors)
}

fn port_refusal(name: &str, field: FieldPath, port: u16, why: &str) -> ApiError {
    let mut errors = FieldErrors::default();
    errors.invalid(field, GoInt(port), why);
    ApiError::invalid("", "Service", name, &errors)
}

/// A string slice printed as Go's `%#v` does: `[]string{"a", "b"}`.
struct GoStrings<'a>(&'a [String]);

impl fmt::Debug for GoStrings<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quoted: Vec<String> = self.0.iter().map(|s| format!("{s:?}")).collect();
        write!(f, "[]string{{{}}}", quoted.join(", "))
    }
}

/// A number printed bare.
struct GoInt(u16);

impl fmt::Debug for GoInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

fn service_type(spec: &ServiceSpec) -> &str {
    spec.type_.as_deref().unwrap_or("ClusterIP")
}

/// A port number the Service asks for, if any.
fn requested_port(port: Option<i32>) -> Option<u16> {
    port.filter(|p| *p != 0)
        .map(|p| u16::try_from(p).unwrap_or(0))
}

/// LoadBalancers with `externalTrafficPolicy: Local` get a health check port.
fn needs_health_check(spec: &ServiceSpec) -> bool {
    service_type(spec) == "LoadBalancer" && spec.external_traffic_policy.as_deref() == Some("Local")
}

/// A port of the Service that takes a NodePort in this request.
#[derive(Debug)]
struct PortSlot {
    /// Its index in `spec.ports`.
    index: usize,
    /// The requested port, or `None` for any.
    requested: Option<u16>,
}

/// The ports that take a NodePort: NodePort and LoadBalancer Services
/// (unless `allocateLoadBalancerNodePorts: false`, which still honours
/// requested ones); one port number shared by the ports of one service port
/// (TCP and UDP); ports already `held` are kept as they are.
fn node_port_slots(spec: &ServiceSpec, held: Option<&[u16]>) -> Vec<PortSlot> {
    let type_ = service_type(spec);
    if type_ != "NodePort" && type_ != "LoadBalancer" {
        return Vec::new();
    }
    let allocate = type_ == "NodePort" || spec.allocate_load_balancer_node_ports != Some(false);
    let mut slots: Vec<PortSlot> = Vec::new();
    let mut seen: Vec<(i32, Option<u16>)> = Vec::new();
    for (index, port) in spec.ports.iter().flatten().enumerate() {
        let node_port = port.node_port.unwrap_or(0);
        let service_port = port.port;
        if node_port == 0 && !allocate {
            continue;
        }
        let requested = (node_port != 0).then(|| u16::try_from(node_port).unwrap_or(0));
        if let Some(p) = requested
            && (held.is_some_and(|h| h.contains(&p)) || seen.iter().any(|(_, r)| *r == Some(p)))
        {
            continue;
        }
        // A second protocol of the same service port shares its NodePort.
        if requested.is_none() && seen.iter().any(|(sp, _)| *sp == service_port) {
            continue;
        }
        seen.push((service_port, requested));
        slots.push(PortSlot { index, requested });
    }
    slots
}

/// Writes the taken NodePorts into the ports that asked for any, and gives
/// the other protocols of one service port the same number.
fn fill_node_ports(
    spec: &mut ServiceSpec,
    slots: &[PortSlot],
    taken: &mut impl Iterator<Item = u16>,
) {
    let Some(ports) = spec.ports.as_mut() else {
        return;
    };
    for slot in slots {
        let number = taken.next();
        if let (None, Some(number)) = (slot.requested, number)
            && let Some(port) = ports.get_mut(slot.index)
        {
            port.node_port = Some(i32::from(number));
        }
    }
    let by_service_port: Vec<(i32, i32)> = ports
        .iter()
        .filter_map(|port| {
            let node_port = port.node_port.filter(|p| *p != 0)?;
            Some((port.port, node_port))
        })
        .collect();
    for port in ports.iter_mut() {
        if port.node_port.unwrap_or(0) == 0
            && let Some((_, node_port)) = by_service_port.iter().find(|(sp, _)| *sp == port.port)
        {
            port.node_port = Some(*node_port);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_and_count_as_upstream() {
        let range: IpRange = "10.96.0.0/12".parse().unwrap();
        assert_eq!(range.size(), (1 << 20) - 2);
        assert_eq!(range.to_string(), "10.96.0.0/12");
        assert_eq!(range.address(0), IpAddr::from([10, 96, 0, 1]));
        assert_eq!(range.offset(IpAddr::from([10, 96, 0, 1])), Some(0));
        assert_eq!(range.offset(IpAddr::from([10, 96, 0, 0])), None);
        assert_eq!(
            range.offset(IpAddr::from([10, 111, 255, 255])),
            None,
            "broadcast"
        );
        assert_eq!(range.offset(IpAddr::from([10, 200, 0, 1])), None);
        assert_eq!(
            "10.96.3.4/16".parse::<IpRange>().unwrap().to_string(),
            "10.96.0.0/16"
        );
        assert!("10.96.0.0/30".parse::<IpRange>().is_err());
        assert!("fd00::/64".parse::<IpRange>().is_ok());
        assert!("nonsense".parse::<IpRange>().is_err());
    }

    #[test]
    fn bitmaps_hand_out_each_offset_once() {
        let mut bitmap = Bitmap::empty(40);
        let mut seen = Vec::new();
        for _ in 0..40 {
            let offset = bitmap.free(16).unwrap();
            assert!(!seen.contains(&offset));
            bitmap.set(offset, true);
            seen.push(offset);
        }
        // The upper band went first.
        assert!(seen[..24].iter().all(|o| *o >= 16), "{seen:?}");
        assert_eq!(bitmap.free(16), None);
        for json in [false, true] {
            let stored = bitmap.encode("x", json);
            let again = Bitmap::decode(&stored, "x", 40).unwrap();
            assert!((0..40).all(|i| again.is_set(i)));
            assert!(Bitmap::decode(&stored, "y", 40).is_err(), "another range");
        }
    }

    /// Bytes as kube-apiserver writes them: offsets 0 and 9 taken is the
    /// integer 0x0201, `data` = [0x02, 0x01].
    #[test]
    fn bitmaps_are_stored_as_upstream_stores_them() {
        let mut bitmap = Bitmap::empty(100);
        bitmap.set(0, true);
        bitmap.set(9, true);
        assert_eq!(bitmap.data(), vec![0x02, 0x01]);
        assert_eq!(Bitmap::empty(100).data(), Vec::<u8>::new());
        let mut raw = Vec::new();
        put_bytes(&mut raw, 1, &[]);
        put_bytes(&mut raw, 2, b"10.0.0.0/24");
        put_bytes(&mut raw, 3, &[0x02, 0x01]);
        let upstream = envelope::encode("v1", "RangeAllocation", &raw);
        assert_eq!(bitmap.encode("10.0.0.0/24", false), upstream);
        let read = Bitmap::decode(&upstream, "10.0.0.0/24", 254).unwrap();
        let taken: Vec<usize> = (0..254).filter(|o| read.is_set(*o)).collect();
        assert_eq!(taken, vec![0, 9]);
        let json = br#"{"kind":"RangeAllocation","apiVersion":"v1","metadata":{},"range":"30000-32767","data":"AgE="}"#;
        let read = Bitmap::decode(json, "30000-32767", 2768).unwrap();
        assert!(read.is_set(0) && read.is_set(9) && !read.is_set(1));
        // A bitmap reaching past the range is refused, not cut.
        assert!(Bitmap::decode(&upstream, "10.0.0.0/24", 8).is_err());
    }

    /// The repair rebuilds the bitmaps from the Services: an offset no
    /// Service holds is given back on the third run, and a bitmap of another
    /// range is replaced by one of the configured range.
    #[tokio::test]
    async fn repairs_give_back_leaks_and_follow_the_configured_range() {
        let dir = tempfile::tempdir().unwrap();
        let store = kapi_storage::embedded::EmbeddedStore::open(dir.path()).unwrap();
        let ranges = |cidr: &str| ServiceRanges {
            cluster_ips: cidr.parse().unwrap(),
            node_ports: (30000, 30100),
        };
        let mut leaked = Bitmap::empty(254);
        leaked.set(5, true);
        store
            .create(IPS_KEY, leaked.encode("10.0.0.0/24", false))
            .await
            .unwrap();
        let allocator = ServiceAllocator::new(ranges("10.0.0.0/24"));
        let mut leaks = Leaks::default();
        let read = |bytes: &[u8], range: &str| Bitmap::decode(bytes, range, 254).unwrap();
        for run in 1..=3 {
            allocator.repair(&store, &[], &mut leaks).await.unwrap();
            let stored = store.get(IPS_KEY).await.unwrap().unwrap();
            assert_eq!(
                read(&stored.value, "10.0.0.0/24").is_set(5),
                run < 3,
                "run {run}"
            );
        }
        let moved = ServiceAllocator::new(ranges("10.1.0.0/24"));
        let mut service = Service::default();
        service.spec.cluster_ip = Some("10.1.0.7".into());
        service.spec.cluster_ips = Some(vec!["10.1.0.7".into()]);
        moved
            .repair(&store, &[service], &mut Leaks::default())
            .await
            .unwrap();
        let stored = store.get(IPS_KEY).await.unwrap().unwrap();
        let rebuilt = read(&stored.value, "10.1.0.0/24");
        assert_eq!(
            (0..254).filter(|o| rebuilt.is_set(*o)).collect::<Vec<_>>(),
            vec![6]
        );
    }

    #[test]
    fn the_reserved_band_is_upstreams() {
        let range = |text: &str| text.parse::<IpRange>().unwrap();
        assert_eq!(reserved(range("10.96.0.0/12").cidr_size(), 16, 256), 256);
        assert_eq!(reserved(range("10.0.0.0/24").cidr_size(), 16, 256), 16);
        assert_eq!(reserved(range("10.0.0.0/28").cidr_size(), 16, 256), 0);
        assert_eq!(reserved(range("fd00::/64").cidr_size(), 16, 256), 256);
        assert_eq!(range("fd00::/64").size(), 65535);
        assert_eq!(range("fd00::/112").size(), 65535);
        assert_eq!(range("fd00::/120").size(), 255);
        assert_eq!(reserved(2768, 32, 128), 86);
    }
}
