//! The Kubernetes CEL library functions the `cel` crate does not have:
//! the lists library (`isSorted`, `sum`, `min`, `max`, `indexOf`,
//! `lastIndexOf` on lists), the regex library (`find`, `findAll`) and the
//! quantity library (`isQuantity`, `quantity`, comparisons, arithmetic,
//! conversions), the URL library (`isURL`, `url` and its parts), the IP
//! and CIDR libraries and the format library (`format.named`,
//! `format.dns1123Label()`, ..., `validate`).

use std::cmp::Ordering;
use std::sync::Arc;

use cel::extractors::This;
use cel::objects::Opaque;
use cel::{Context, ExecutionError, Value};

type Result<T> = std::result::Result<T, ExecutionError>;

/// Registers the library on `ctx`.
pub fn install(ctx: &mut Context<'_, '_>) {
    // Names are fixed and distinct: adding them to a fresh context cannot
    // conflict.
    let _ = ctx.add_function("isSorted", is_sorted);
    let _ = ctx.add_function("sum", sum);
    let _ = ctx.add_function("min", min);
    let _ = ctx.add_function("max", max);
    let _ = ctx.add_function("indexOf", index_of);
    let _ = ctx.add_function("lastIndexOf", last_index_of);
    let _ = ctx.add_function("find", find);
    let _ = ctx.add_function("findAll", find_all);
    let _ = ctx.add_function("isQuantity", is_quantity);
    let _ = ctx.add_function("quantity", quantity);
    let _ = ctx.add_function("isLessThan", is_less_than);
    let _ = ctx.add_function("isGreaterThan", is_greater_than);
    let _ = ctx.add_function("compareTo", compare_to);
    let _ = ctx.add_function("add", add);
    let _ = ctx.add_function("sub", sub);
    let _ = ctx.add_function("asInteger", as_integer);
    let _ = ctx.add_function("asApproximateFloat", as_approximate_float);
    let _ = ctx.add_function("isInteger", is_integer);
    let _ = ctx.add_function("sign", sign);
    let _ = ctx.add_function("isURL", is_url);
    let _ = ctx.add_function("url", url);
    let _ = ctx.add_function("getScheme", get_scheme);
    let _ = ctx.add_function("getHost", get_host);
    let _ = ctx.add_function("getHostname", get_hostname);
    let _ = ctx.add_function("getPort", get_port);
    let _ = ctx.add_function("getEscapedPath", get_escaped_path);
    let _ = ctx.add_function("getQuery", get_query);
    let _ = ctx.add_function("isIP", is_ip);
    let _ = ctx.add_function("ip", ip);
    let _ = ctx.add_function("ip.isCanonical", ip_is_canonical);
    let _ = ctx.add_function("sets.contains", sets_contains);
    let _ = ctx.add_function("sets.equivalent", sets_equivalent);
    let _ = ctx.add_function("sets.intersects", sets_intersects);
    let _ = ctx.add_function("family", family);
    let _ = ctx.add_function("isUnspecified", is_unspecified);
    let _ = ctx.add_function("isLoopback", is_loopback);
    let _ = ctx.add_function("isLinkLocalMulticast", is_link_local_multicast);
    let _ = ctx.add_function("isLinkLocalUnicast", is_link_local_unicast);
    let _ = ctx.add_function("isGlobalUnicast", is_global_unicast);
    let _ = ctx.add_function("isCIDR", is_cidr);
    let _ = ctx.add_function("cidr", cidr);
    let _ = ctx.add_function("containsIP", contains_ip);
    let _ = ctx.add_function("containsCIDR", contains_cidr);
    let _ = ctx.add_function("prefixLength", prefix_length);
    let _ = ctx.add_function("masked", masked);
    let _ = ctx.add_function("format.named", format_named);
    for (function, _) in FORMATS {
        let _ = ctx.add_function(&format!("format.{function}"), format_of);
    }
    let _ = ctx.add_function("validate", format_validate);
}

fn list(value: &Value, function: &str) -> Result<Arc<Vec<Value>>> {
    match value {
        Value::List(items) => Ok(items.clone()),
        other => Err(no_overload(function, other)),
    }
}

fn no_overload(function: &str, value: &Value) -> ExecutionError {
    ExecutionError::no_such_member_overload(function, vec![format!("{:?}", value.type_of())])
}

fn compare(a: &Value, b: &Value) -> Result<Ordering> {
    a.partial_cmp(b)
        .ok_or_else(|| ExecutionError::ValuesNotComparable(a.clone(), b.clone()))
}

fn is_sorted(This(this): This<Value>) -> Result<bool> {
    let items = list(&this, "isSorted")?;
    for pair in items.windows(2) {
        if compare(&pair[0], &pair[1])? == Ordering::Greater {
            return Ok(false);
        }
    }
    Ok(true)
}

fn sum(This(this): This<Value>) -> Result<Value> {
    let items = list(&this, "sum")?;
    let mut total = match items.first() {
        None | Some(Value::Int(_)) => Value::Int(0),
        Some(Value::UInt(_)) => Value::UInt(0),
        Some(Value::Float(_)) => Value::Float(0.0),
        Some(Value::Duration(_)) => Value::Duration(chrono::Duration::zero()),
        Some(other) => return Err(no_overload("sum", other)),
    };
    for item in items.iter() {
        total = match (&total, item) {
            (Value::Int(a), Value::Int(b)) => Value::Int(
                a.checked_add(*b)
                    .ok_or_else(|| ExecutionError::Overflow("add", total.clone(), item.clone()))?,
            ),
            (Value::UInt(a), Value::UInt(b)) => Value::UInt(
                a.checked_add(*b)
                    .ok_or_else(|| ExecutionError::Overflow("add", total.clone(), item.clone()))?,
            ),
            (Value::Float(a), Value::Float(b)) => Value::Float(a + b),
            (Value::Duration(a), Value::Duration(b)) => Value::Duration(*a + *b),
            _ => return Err(no_overload("sum", item)),
        };
    }
    Ok(total)
}

fn extreme(this: &Value, function: &str, keep: Ordering) -> Result<Value> {
    let items = list(this, function)?;
    let Some(first) = items.first() else {
        return Err(ExecutionError::function_error(
            function,
            format!("{function}(list) called on an empty list"),
        ));
    };
    let mut best = first;
    for item in items.iter().skip(1) {
        if compare(item, best)? == keep {
            best = item;
        }
    }
    Ok(best.clone())
}

fn min(This(this): This<Value>) -> Result<Value> {
    extreme(&this, "min", Ordering::Less)
}

fn max(This(this): This<Value>) -> Result<Value> {
    extreme(&this, "max", Ordering::Greater)
}

fn index_of(This(this): This<Value>, needle: Value) -> Result<i64> {
    let items = list(&this, "indexOf")?;
    Ok(items
        .iter()
        .position(|item| *item == needle)
        .map_or(-1, |i| i as i64))
}

fn last_index_of(This(this): This<Value>, needle: Value) -> Result<i64> {
    let items = list(&this, "lastIndexOf")?;
    Ok(items
        .iter()
        .rposition(|item| *item == needle)
        .map_or(-1, |i| i as i64))
}

fn text<'a>(value: &'a Value, function: &str) -> Result<&'a str> {
    match value {
        Value::String(s) => Ok(s.as_str()),
        other => Err(no_overload(function, other)),
    }
}

fn regex(pattern: &Value, function: &str) -> Result<regex::Regex> {
    let pattern = text(pattern, function)?;
    regex::Regex::new(pattern)
        .map_err(|e| ExecutionError::function_error(function, format!("error parsing regexp: {e}")))
}

fn find(This(this): This<Value>, pattern: Value) -> Result<Value> {
    let haystack = text(&this, "find")?;
    let re = regex(&pattern, "find")?;
    Ok(Value::String(Arc::new(
        re.find(haystack).map_or("", |m| m.as_str()).to_owned(),
    )))
}

fn find_all(This(this): This<Value>, pattern: Value) -> Result<Value> {
    let haystack = text(&this, "findAll")?;
    let re = regex(&pattern, "findAll")?;
    Ok(Value::List(Arc::new(
        re.find_iter(haystack)
            .map(|m| Value::String(Arc::new(m.as_str().to_owned())))
            .collect(),
    )))
}

/// A `resource.Quantity`, by its value in nano-units.
#[derive(Debug, PartialEq, Eq)]
struct Quantity {
    nanos: i128,
}

impl Opaque for Quantity {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Quantity"
    }
}

fn parse_quantity(text: &str) -> Option<Quantity> {
    kapi_runtime::quantity::nano_value(text).map(|nanos| Quantity { nanos })
}

fn as_quantity(value: &Value, function: &str) -> Result<i128> {
    match value {
        Value::Opaque(o) => o
            .downcast_ref::<Quantity>()
            .map(|q| q.nanos)
            .ok_or_else(|| no_overload(function, value)),
        other => Err(no_overload(function, other)),
    }
}

fn quantity_value(nanos: i128) -> Value {
    Value::Opaque(Arc::new(Quantity { nanos }))
}

fn is_quantity(value: Value) -> Result<bool> {
    Ok(parse_quantity(text(&value, "isQuantity")?).is_some())
}

fn quantity(value: Value) -> Result<Value> {
    let s = text(&value, "quantity")?;
    parse_quantity(s)
        .map(|q| quantity_value(q.nanos))
        .ok_or_else(|| {
            ExecutionError::function_error("quantity", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
        })
}

/// A quantity or an integer operand, in nano-units.
fn operand(value: &Value, function: &str) -> Result<i128> {
    match value {
        Value::Int(i) => Ok(i128::from(*i) * 1_000_000_000),
        other => as_quantity(other, function),
    }
}

fn is_less_than(This(this): This<Value>, other: Value) -> Result<bool> {
    Ok(as_quantity(&this, "isLessThan")? < as_quantity(&other, "isLessThan")?)
}

fn is_greater_than(This(this): This<Value>, other: Value) -> Result<bool> {
    Ok(as_quantity(&this, "isGreaterThan")? > as_quantity(&other, "isGreaterThan")?)
}

fn compare_to(This(this): This<Value>, other: Value) -> Result<i64> {
    Ok(
        match as_quantity(&this, "compareTo")?.cmp(&as_quantity(&other, "compareTo")?) {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        },
    )
}

fn add(This(this): This<Value>, other: Value) -> Result<Value> {
    Ok(quantity_value(
        as_quantity(&this, "add")? + operand(&other, "add")?,
    ))
}

fn sub(This(this): This<Value>, other: Value) -> Result<Value> {
    Ok(quantity_value(
        as_quantity(&this, "sub")? - operand(&other, "sub")?,
    ))
}

fn as_integer(This(this): This<Value>) -> Result<i64> {
    let nanos = as_quantity(&this, "asInteger")?;
    if nanos % 1_000_000_000 != 0 {
        return Err(ExecutionError::function_error(
            "asInteger",
            "cannot convert value to integer",
        ));
    }
    i64::try_from(nanos / 1_000_000_000)
        .map_err(|_| ExecutionError::function_error("asInteger", "cannot convert value to integer"))
}

fn as_approximate_float(This(this): This<Value>) -> Result<f64> {
    Ok(as_quantity(&this, "asApproximateFloat")? as f64 / 1e9)
}

fn is_integer(This(this): This<Value>) -> Result<bool> {
    let nanos = as_quantity(&this, "isInteger")?;
    Ok(nanos % 1_000_000_000 == 0 && i64::try_from(nanos / 1_000_000_000).is_ok())
}

fn sign(This(this): This<Value>) -> Result<i64> {
    Ok(as_quantity(&this, "sign")?.signum() as i64)
}

/// A URL as Go's `url.ParseRequestURI` splits it: an absolute URI
/// (`scheme:`, with `//host[:port]` when it has an authority) or an
/// absolute path.
#[derive(Debug, PartialEq, Eq)]
struct Url {
    scheme: String,
    host: String,
    path: String,
    query: String,
}

impl Opaque for Url {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.URL"
    }
}

fn parse_url(text: &str) -> Option<Url> {
    if text.is_empty() || text.chars().any(|c| c.is_control() || c == ' ') {
        return None;
    }
    let (before_query, query) = match text.split_once('?') {
        Some((b, q)) => (b, q.to_owned()),
        None => (text, String::new()),
    };
    if before_query.starts_with('/') {
        return Some(Url {
            scheme: String::new(),
            host: String::new(),
            path: before_query.to_owned(),
            query,
        });
    }
    let (scheme, rest) = before_query.split_once(':')?;
    let mut chars = scheme.chars();
    if !chars.next()?.is_ascii_alphabetic()
        || !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return None;
    }
    let (host, path) = match rest.strip_prefix("//") {
        Some(authority_and_path) => {
            let end = authority_and_path
                .find('/')
                .unwrap_or(authority_and_path.len());
            let authority = &authority_and_path[..end];
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            if let Some((_, port)) = split_port(host)
                && !port.chars().all(|c| c.is_ascii_digit())
            {
                return None;
            }
            (host.to_owned(), authority_and_path[end..].to_owned())
        }
        None => (String::new(), rest.to_owned()),
    };
    Some(Url {
        scheme: scheme.to_owned(),
        host,
        path,
        query,
    })
}

/// `host` split into its name and port (`[::1]:80`, `a:80`), if it has one.
fn split_port(host: &str) -> Option<(&str, &str)> {
    if let Some(rest) = host.strip_prefix('[') {
        let (name, after) = rest.split_once(']')?;
        return after.strip_prefix(':').map(|port| (name, port));
    }
    host.rsplit_once(':')
}

fn as_url<'a>(value: &'a Value, function: &str) -> Result<&'a Url> {
    match value {
        Value::Opaque(o) => o
            .downcast_ref::<Url>()
            .ok_or_else(|| no_overload(function, value)),
        other => Err(no_overload(function, other)),
    }
}

fn is_url(value: Value) -> Result<bool> {
    Ok(parse_url(text(&value, "isURL")?).is_some())
}

fn url(value: Value) -> Result<Value> {
    let s = text(&value, "url")?;
    parse_url(s)
        .map(|u| Value::Opaque(Arc::new(u)))
        .ok_or_else(|| {
            ExecutionError::function_error(
                "url",
                format!("URL parse error during conversion from string: parse \"{s}\": invalid URI for request"),
            )
        })
}

fn string_value(s: impl Into<String>) -> Value {
    Value::String(Arc::new(s.into()))
}

fn get_scheme(This(this): This<Value>) -> Result<Value> {
    Ok(string_value(as_url(&this, "getScheme")?.scheme.clone()))
}

fn get_host(This(this): This<Value>) -> Result<Value> {
    Ok(string_value(as_url(&this, "getHost")?.host.clone()))
}

fn get_hostname(This(this): This<Value>) -> Result<Value> {
    let host = &as_url(&this, "getHostname")?.host;
    let name = match split_port(host) {
        Some((name, _)) => name,
        None => host.trim_start_matches('[').trim_end_matches(']'),
    };
    Ok(string_value(name))
}

fn get_port(This(this): This<Value>) -> Result<Value> {
    let host = &as_url(&this, "getPort")?.host;
    Ok(string_value(split_port(host).map_or("", |(_, port)| port)))
}

fn get_escaped_path(This(this): This<Value>) -> Result<Value> {
    Ok(string_value(as_url(&this, "getEscapedPath")?.path.clone()))
}

fn get_query(This(this): This<Value>) -> Result<Value> {
    let query = &as_url(&this, "getQuery")?.query;
    let mut values: std::collections::HashMap<String, Vec<Value>> =
        std::collections::HashMap::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        values
            .entry(k.to_owned())
            .or_default()
            .push(string_value(v));
    }
    Ok(values.into())
}

/// An IP address, as the Kubernetes IP library parses one (no zones, no
/// IPv4-mapped IPv6 addresses).
#[derive(Debug, PartialEq, Eq)]
struct Ip(std::net::IpAddr);

impl Opaque for Ip {
    fn runtime_type_name(&self) -> &str {
        "net.IP"
    }
}

/// A CIDR: an address and a prefix length.
#[derive(Debug, PartialEq, Eq)]
struct Cidr {
    addr: std::net::IpAddr,
    prefix: u8,
}

impl Opaque for Cidr {
    fn runtime_type_name(&self) -> &str {
        "net.IPPrefix"
    }
}

fn parse_ip(text: &str) -> Option<std::net::IpAddr> {
    let addr: std::net::IpAddr = text.parse().ok()?;
    if let std::net::IpAddr::V6(v6) = addr
        && v6.to_ipv4_mapped().is_some()
    {
        return None;
    }
    Some(addr)
}

fn parse_cidr(text: &str) -> Option<Cidr> {
    let (addr, prefix) = text.split_once('/')?;
    let addr = parse_ip(addr)?;
    let prefix: u8 = prefix.parse().ok()?;
    let most = if addr.is_ipv4() { 32 } else { 128 };
    (prefix <= most).then_some(Cidr { addr, prefix })
}

fn as_ip(value: &Value, function: &str) -> Result<std::net::IpAddr> {
    match value {
        Value::Opaque(o) => o
            .downcast_ref::<Ip>()
            .map(|ip| ip.0)
            .ok_or_else(|| no_overload(function, value)),
        Value::String(s) => parse_ip(s).ok_or_else(|| {
            ExecutionError::function_error(function, format!("IP Address {s:?} parse error during conversion from string: ParseAddr({s:?}): unable to parse IP"))
        }),
        other => Err(no_overload(function, other)),
    }
}

fn as_cidr(value: &Value, function: &str) -> Result<(std::net::IpAddr, u8)> {
    match value {
        Value::Opaque(o) => o
            .downcast_ref::<Cidr>()
            .map(|c| (c.addr, c.prefix))
            .ok_or_else(|| no_overload(function, value)),
        Value::String(s) => parse_cidr(s).map(|c| (c.addr, c.prefix)).ok_or_else(|| {
            ExecutionError::function_error(function, format!("network address parse error during conversion from string: netip.ParsePrefix({s:?}): bad prefix"))
        }),
        other => Err(no_overload(function, other)),
    }
}

fn is_ip(value: Value) -> Result<bool> {
    Ok(parse_ip(text(&value, "isIP")?).is_some())
}

fn ip(value: Value) -> Result<Value> {
    match &value {
        // `cidr.ip()`: the CIDR's address.
        Value::Opaque(o) if o.downcast_ref::<Cidr>().is_some() => {
            let (addr, _) = as_cidr(&value, "ip")?;
            Ok(Value::Opaque(Arc::new(Ip(addr))))
        }
        _ => Ok(Value::Opaque(Arc::new(Ip(as_ip(&value, "ip")?)))),
    }
}

/// The elements of a list argument of the sets library.
fn elements<'a>(value: &'a Value, function: &str) -> Result<&'a [Value]> {
    match value {
        Value::List(items) => Ok(items.as_slice()),
        other => Err(ExecutionError::function_error(
            function,
            format!("no such overload: {function}({:?})", other.type_of()),
        )),
    }
}

/// cel-go's sets library: whether every element of `sub` is in `list`.
fn sets_contains(list: Value, sub: Value) -> Result<bool> {
    let list = elements(&list, "sets.contains")?;
    Ok(elements(&sub, "sets.contains")?
        .iter()
        .all(|item| list.contains(item)))
}

/// Whether the two lists hold the same elements (counted once each).
fn sets_equivalent(a: Value, b: Value) -> Result<bool> {
    let (a, b) = (
        elements(&a, "sets.equivalent")?,
        elements(&b, "sets.equivalent")?,
    );
    Ok(a.iter().all(|item| b.contains(item)) && b.iter().all(|item| a.contains(item)))
}

/// Whether the two lists share an element.
fn sets_intersects(a: Value, b: Value) -> Result<bool> {
    let (a, b) = (
        elements(&a, "sets.intersects")?,
        elements(&b, "sets.intersects")?,
    );
    Ok(a.iter().any(|item| b.contains(item)))
}

fn ip_is_canonical(value: Value) -> Result<bool> {
    let s = text(&value, "ip.isCanonical")?;
    let addr = as_ip(&value, "ip.isCanonical")?;
    Ok(addr.to_string() == s)
}

fn family(This(this): This<Value>) -> Result<i64> {
    Ok(if as_ip(&this, "family")?.is_ipv4() {
        4
    } else {
        6
    })
}

fn is_unspecified(This(this): This<Value>) -> Result<bool> {
    Ok(as_ip(&this, "isUnspecified")?.is_unspecified())
}

fn is_loopback(This(this): This<Value>) -> Result<bool> {
    Ok(as_ip(&this, "isLoopback")?.is_loopback())
}

fn is_link_local_multicast(This(this): This<Value>) -> Result<bool> {
    Ok(match as_ip(&this, "isLinkLocalMulticast")? {
        std::net::IpAddr::V4(v4) => v4.octets()[..3] == [224, 0, 0],
        std::net::IpAddr::V6(v6) => v6.segments()[0] & 0xff0f == 0xff02,
    })
}

fn is_link_local_unicast(This(this): This<Value>) -> Result<bool> {
    Ok(match as_ip(&this, "isLinkLocalUnicast")? {
        std::net::IpAddr::V4(v4) => v4.is_link_local(),
        std::net::IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    })
}

fn is_global_unicast(This(this): This<Value>) -> Result<bool> {
    let addr = as_ip(&this, "isGlobalUnicast")?;
    Ok(match addr {
        std::net::IpAddr::V4(v4) => {
            !(v4.is_unspecified()
                || v4.is_loopback()
                || v4.is_multicast()
                || v4.is_link_local()
                || v4.is_broadcast())
        }
        std::net::IpAddr::V6(v6) => {
            !(v6.is_unspecified()
                || v6.is_loopback()
                || v6.is_multicast()
                || v6.segments()[0] & 0xffc0 == 0xfe80)
        }
    })
}

fn is_cidr(value: Value) -> Result<bool> {
    Ok(parse_cidr(text(&value, "isCIDR")?).is_some())
}

fn cidr(value: Value) -> Result<Value> {
    let (addr, prefix) = as_cidr(&value, "cidr")?;
    Ok(Value::Opaque(Arc::new(Cidr { addr, prefix })))
}

/// The bits of `addr` kept by a prefix of `prefix` bits.
fn mask(addr: std::net::IpAddr, prefix: u8) -> std::net::IpAddr {
    match addr {
        std::net::IpAddr::V4(v4) => {
            let bits = u32::from(v4);
            let kept = if prefix == 0 {
                0
            } else {
                bits & (u32::MAX << (32 - u32::from(prefix)))
            };
            std::net::IpAddr::V4(kept.into())
        }
        std::net::IpAddr::V6(v6) => {
            let bits = u128::from(v6);
            let kept = if prefix == 0 {
                0
            } else {
                bits & (u128::MAX << (128 - u32::from(prefix)))
            };
            std::net::IpAddr::V6(kept.into())
        }
    }
}

fn contains(network: (std::net::IpAddr, u8), addr: std::net::IpAddr) -> bool {
    network.0.is_ipv4() == addr.is_ipv4() && mask(addr, network.1) == mask(network.0, network.1)
}

fn contains_ip(This(this): This<Value>, other: Value) -> Result<bool> {
    let network = as_cidr(&this, "containsIP")?;
    Ok(contains(network, as_ip(&other, "containsIP")?))
}

fn contains_cidr(This(this): This<Value>, other: Value) -> Result<bool> {
    let network = as_cidr(&this, "containsCIDR")?;
    let (addr, prefix) = as_cidr(&other, "containsCIDR")?;
    Ok(prefix >= network.1 && contains(network, addr))
}

fn prefix_length(This(this): This<Value>) -> Result<i64> {
    Ok(i64::from(as_cidr(&this, "prefixLength")?.1))
}

fn masked(This(this): This<Value>) -> Result<Value> {
    let (addr, prefix) = as_cidr(&this, "masked")?;
    Ok(Value::Opaque(Arc::new(Cidr {
        addr: mask(addr, prefix),
        prefix,
    })))
}

/// The checks of one format: the problems of a value.
type Check = fn(&str) -> Vec<String>;

/// The formats of the format library: each name and its checks.
pub const FORMATS: &[(&str, Check)] = &[
    (
        "dns1123Label",
        kapi_runtime::validation::dns1123_label_errors,
    ),
    (
        "dns1123Subdomain",
        kapi_runtime::validation::dns1123_subdomain_errors,
    ),
    (
        "dns1035Label",
        kapi_runtime::validation::dns1035_label_errors,
    ),
    (
        "qualifiedName",
        kapi_runtime::validation::qualified_name_errors,
    ),
    ("dns1123LabelPrefix", |s| {
        kapi_runtime::validation::dns1123_label_errors(s.strip_suffix('-').unwrap_or(s))
    }),
    ("dns1123SubdomainPrefix", |s| {
        kapi_runtime::validation::dns1123_subdomain_errors(s.strip_suffix('-').unwrap_or(s))
    }),
    ("dns1035LabelPrefix", |s| {
        kapi_runtime::validation::dns1035_label_errors(s.strip_suffix('-').unwrap_or(s))
    }),
    ("labelValue", kapi_runtime::validation::label_value_errors),
    ("uri", |s| {
        if parse_url(s).is_some() {
            Vec::new()
        } else {
            vec!["invalid URI".to_owned()]
        }
    }),
    ("uuid", |s| {
        if uuid::Uuid::parse_str(s).is_ok() && s.len() == 36 {
            Vec::new()
        } else {
            vec!["does not match the UUID format".to_owned()]
        }
    }),
    ("byte", |s| {
        use base64::Engine as _;
        if base64::engine::general_purpose::STANDARD.decode(s).is_ok() {
            Vec::new()
        } else {
            vec!["invalid base64".to_owned()]
        }
    }),
    ("date", |s| {
        if chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok() {
            Vec::new()
        } else {
            vec!["invalid date".to_owned()]
        }
    }),
    ("datetime", |s| {
        if chrono::DateTime::parse_from_rfc3339(s).is_ok() {
            Vec::new()
        } else {
            vec!["invalid datetime".to_owned()]
        }
    }),
];

/// A format of the format library.
#[derive(Debug, PartialEq, Eq)]
struct Format(&'static str);

impl Opaque for Format {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.NamedFormat"
    }
}

fn format_value(name: &str) -> Option<Value> {
    FORMATS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, _)| Value::Opaque(Arc::new(Format(n))))
}

/// `format.named(name)`: the format, or none.
fn format_named(name: Value) -> Result<Value> {
    let name = text(&name, "format.named")?;
    let found = match format_value(name) {
        Some(format) => cel::objects::OptionalValue::of(format),
        None => cel::objects::OptionalValue::none(),
    };
    Ok(Value::Opaque(Arc::new(found)))
}

/// `format.dns1123Label()` and the others: the format the call names.
fn format_of(ftx: &cel::FunctionContext) -> Result<Value> {
    format_value(ftx.name).ok_or_else(|| ftx.error(format!("no format {}", ftx.name)))
}

/// `<format>.validate(value)`: none when `value` has the format, else the
/// list of what is wrong.
fn format_validate(This(this): This<Value>, value: Value) -> Result<Value> {
    let Value::Opaque(o) = &this else {
        return Err(no_overload("validate", &this));
    };
    let Some(Format(name)) = o.downcast_ref::<Format>() else {
        return Err(no_overload("validate", &this));
    };
    let check = FORMATS
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, check)| *check)
        .ok_or_else(|| no_overload("validate", &this))?;
    let errors = check(text(&value, "validate")?);
    let result = if errors.is_empty() {
        cel::objects::OptionalValue::none()
    } else {
        cel::objects::OptionalValue::of(Value::List(Arc::new(
            errors.into_iter().map(string_value).collect(),
        )))
    };
    Ok(Value::Opaque(Arc::new(result)))
}
