//! IP addresses as kube-apiserver 1.32 reads them (`netutils.ParseIPSloppy`):
//! an IPv4 octet may carry leading zeros (`010.1.1.1` is `10.1.1.1`), which
//! Rust's parser refuses, and an IPv4-mapped IPv6 address is its IPv4 address
//! for the special-range checks (Go's `To4`).

use std::net::{IpAddr, Ipv4Addr};

/// An IPv4 address in dotted form, each octet decimal with any number of
/// leading zeros.
fn parse_v4(text: &str) -> Option<Ipv4Addr> {
    let mut octets = [0u8; 4];
    let mut parts = text.split('.');
    for octet in &mut octets {
        let part = parts.next()?;
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let value = part.trim_start_matches('0');
        *octet = if value.is_empty() {
            0
        } else if value.len() > 3 {
            return None;
        } else {
            value.parse().ok()?
        };
    }
    parts.next().is_none().then_some(Ipv4Addr::from(octets))
}

/// The address `text` stands for, or `None` when Go's sloppy parser refuses
/// it; an IPv4-mapped IPv6 address comes back as IPv4.
pub(crate) fn parse_ip_sloppy(text: &str) -> Option<IpAddr> {
    if !text.contains(':') {
        return parse_v4(text).map(IpAddr::V4);
    }
    // An embedded IPv4 tail may have leading zeros too.
    let normalized = match text.rsplit_once(':') {
        Some((head, tail)) if tail.contains('.') => format!("{head}:{}", parse_v4(tail)?),
        _ => text.to_owned(),
    };
    let v6: std::net::Ipv6Addr = normalized.parse().ok()?;
    Some(match v6.to_ipv4_mapped() {
        Some(v4) => IpAddr::V4(v4),
        None => IpAddr::V6(v6),
    })
}

/// `IsValidCIDR`: `address/prefix` as `netutils.ParseCIDRSloppy` reads it
/// (leading zeros allowed in IPv4 octets).
pub(crate) fn sloppy_cidr(
    value: &str,
    path: &kapi_runtime::validation::FieldPath,
    errs: &mut kapi_runtime::validation::FieldErrors,
) {
    let valid = value.split_once('/').is_some_and(|(addr, bits)| {
        let max = match (addr.contains(':'), parse_ip_sloppy(addr)) {
            (_, None) => return false,
            (false, Some(_)) => 32,
            (true, Some(_)) => 128,
        };
        !bits.is_empty()
            && bits.bytes().all(|c| c.is_ascii_digit())
            && bits.parse::<u32>().is_ok_and(|b| b <= max)
    });
    if !valid {
        errs.invalid(
            path.clone(),
            value,
            "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_zeros_and_mapped_addresses() {
        assert_eq!(
            parse_ip_sloppy("010.001.002.003"),
            Some(IpAddr::V4(Ipv4Addr::new(10, 1, 2, 3)))
        );
        assert_eq!(
            parse_ip_sloppy("::ffff:127.0.0.1"),
            Some(IpAddr::V4(Ipv4Addr::LOCALHOST))
        );
        assert_eq!(parse_ip_sloppy("1.2.3.4 "), None);
        assert_eq!(parse_ip_sloppy("1.2.3"), None);
        assert_eq!(parse_ip_sloppy("256.1.1.1"), None);
        assert!(parse_ip_sloppy("2001:db8::1").is_some());
    }
}
