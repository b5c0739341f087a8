//! Checks that several kinds' validation hooks share, as
//! k8s.io/kubernetes/pkg/apis/core/validation and apimachinery's
//! `metav1validation` define them: label maps, label selectors, quantities and
//! ports. The kinds' own rules live in `<group>/v1/validation.rs`.

use std::collections::BTreeMap;
use std::fmt;

use kapi_runtime::meta::LabelSelector;
use kapi_runtime::validation::{
    FieldErrors, FieldPath, dns1123_subdomain_errors, is_percent, label_value_errors,
    path_segment_errors, port_name_errors, port_number_errors, qualified_name_errors,
};
use kapi_runtime::{IntOrString, Quantity};

/// A value printed as is in a message (Go prints some typed strings and
/// structs without quotes).
pub(crate) struct Raw<'a>(pub &'a str);

impl fmt::Debug for Raw<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// A name validated as a DNS subdomain (`ValidateNameFunc` of most kinds).
pub(crate) fn dns1123_subdomain(value: &str, path: &FieldPath, errs: &mut FieldErrors) {
    for detail in dns1123_subdomain_errors(value) {
        errs.invalid(path.clone(), value, &detail);
    }
}

/// `ValidateLabels`: every key a qualified name and every value a label value;
/// the errors point at the map itself, not at the entry.
pub(crate) fn validate_labels(
    labels: Option<&BTreeMap<String, String>>,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    for (key, value) in labels.into_iter().flatten() {
        label_name(key, path, errs);
        for detail in label_value_errors(value) {
            errs.invalid(path.clone(), value, &detail);
        }
    }
}

/// `ValidateLabelName`: a qualified name.
pub(crate) fn label_name(key: &str, path: &FieldPath, errs: &mut FieldErrors) {
    for detail in qualified_name_errors(key) {
        errs.invalid(path.clone(), key, &detail);
    }
}

/// `metav1validation.ValidateLabelSelector` with the options the workload
/// kinds use: label syntax of `matchLabels`, operators and values of
/// `matchExpressions`.
pub(crate) fn validate_label_selector(
    selector: &LabelSelector,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    for (i, req) in selector.match_expressions.iter().flatten().enumerate() {
        let req_path = path.child("matchExpressions").index(i);
        // Operator and values are the requirement's own rule (runtime meta);
        // the key's syntax is checked here.
        label_name(&req.key, &req_path.child("key"), errs);
        for (j, value) in req.values.iter().flatten().enumerate() {
            for detail in label_value_errors(value) {
                errs.invalid(req_path.child("values").index(j), value.as_str(), &detail);
            }
        }
    }
    validate_labels(
        selector.match_labels.as_ref(),
        &path.child("matchLabels"),
        errs,
    );
}

/// `ValidatePortNumOrName`: a number in 1-65535 or an IANA service name.
pub(crate) fn port_num_or_name(port: &IntOrString, path: &FieldPath, errs: &mut FieldErrors) {
    match port {
        IntOrString::Int(n) => {
            for detail in port_number_errors(i64::from(*n)) {
                errs.invalid(path.clone(), n, &detail);
            }
        }
        IntOrString::String(name) => {
            for detail in port_name_errors(name) {
                errs.invalid(path.clone(), name.as_str(), &detail);
            }
        }
    }
}

/// `ValidatePositiveIntOrPercent` (apps): a non-negative number or `N%`.
pub(crate) fn int_or_percent(value: &IntOrString, path: &FieldPath, errs: &mut FieldErrors) {
    match value {
        IntOrString::Int(n) if *n < 0 => {
            errs.invalid(path.clone(), n, "must be greater than or equal to 0")
        }
        IntOrString::Int(_) => {}
        IntOrString::String(s) if is_percent(s) => {}
        IntOrString::String(_) => errs.invalid(
            path.clone(),
            GoIntOrString(value),
            "a valid percent string must be a numeric string followed by an ending '%' (e.g. \
             '1%',  or '93%', regex used for validation is '[0-9]+%')",
        ),
    }
}

/// The value of a quantity as a float, good enough to compare two quantities
/// (`None` when the text is not a quantity).
pub(crate) fn quantity_value(quantity: &Quantity) -> Option<f64> {
    let text = quantity.0.as_str();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '+' | '-')))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let factor = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        exp => {
            let digits = exp.strip_prefix(['e', 'E'])?;
            10f64.powi(digits.parse().ok()?)
        }
    };
    Some(number * factor)
}

/// `ValidateNonnegativeQuantity`.
pub(crate) fn nonnegative_quantity(quantity: &Quantity, path: &FieldPath, errs: &mut FieldErrors) {
    if quantity_value(quantity).is_some_and(|v| v < 0.0) {
        errs.invalid(
            path.clone(),
            quantity.0.as_str(),
            "must be greater than or equal to 0",
        );
    }
}

/// `IsDomainPrefixedPath`: `<DNS subdomain>/<HTTP path>`, e.g. `acme.io/foo`.
pub(crate) fn domain_prefixed_path(value: &str, path: &FieldPath, errs: &mut FieldErrors) {
    if value.is_empty() {
        errs.required(path.clone(), "");
        return;
    }
    let Some((host, rest)) = value
        .split_once('/')
        .filter(|(h, r)| !h.is_empty() && !r.is_empty())
    else {
        errs.invalid(
            path.clone(),
            value,
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        );
        return;
    };
    dns1123_subdomain(host, path, errs);
    let path_char = |c: char| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c);
    if !rest.chars().all(path_char) {
        errs.invalid(
            path.clone(),
            rest,
            "Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')",
        );
    }
}

/// `ValidatePathSegmentName` (`IsPathSegmentName`): a name that can be one
/// segment of a URL path (a role's, a scale target's).
pub(crate) fn path_segment_name(name: &str, path: &FieldPath, errs: &mut FieldErrors) {
    for detail in path_segment_errors(name) {
        errs.invalid(path.clone(), name, &detail);
    }
}

/// `ValidateNonSpecialIP` once `ip` parsed as `addr`: not unspecified,
/// loopback or link-local (the addresses of endpoints and external IPs).
pub(crate) fn special_ip(
    addr: std::net::IpAddr,
    ip: &str,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    use std::net::IpAddr;
    if addr.is_unspecified() {
        errs.invalid(path.clone(), ip, &format!("may not be unspecified ({ip})"));
    }
    if addr.is_loopback() {
        errs.invalid(
            path.clone(),
            ip,
            "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        );
    }
    let (link_local, link_local_multicast) = match addr {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            (v4.is_link_local(), o[0] == 224 && o[1] == 0 && o[2] == 0)
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            (s[0] & 0xffc0 == 0xfe80, s[0] & 0xff0f == 0xff02)
        }
    };
    if link_local {
        errs.invalid(
            path.clone(),
            ip,
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        );
    }
    if link_local_multicast {
        errs.invalid(
            path.clone(),
            ip,
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        );
    }
}

/// `ValidateNonnegativeField`.
pub(crate) fn nonnegative(value: Option<i64>, path: &FieldPath, errs: &mut FieldErrors) {
    if let Some(n) = value
        && n < 0
    {
        errs.invalid(path.clone(), n, "must be greater than or equal to 0");
    }
}

/// `IsValidCIDR` (legacy field form): `address/prefix` as kube-apiserver
/// 1.32 reads it with `netutils.ParseCIDRSloppy`, leading zeros in IPv4
/// octets and in the prefix allowed.
pub(crate) fn cidr(value: &str, path: &FieldPath, errs: &mut FieldErrors) {
    crate::core::v1::validation::sloppy_cidr(value, path, errs);
}

/// A CIDR as `netutils.ParseCIDRSloppy` reads it: the address, the prefix
/// length as written, and the prefix length within the address's family.
/// An IPv4-mapped IPv6 network (`::ffff:10.0.0.0/104`) is an IPv4 one, its
/// prefix less the 96 bits of the mapping, as Go's `IPNet.Contains` sees it.
pub(crate) fn parse_cidr_sloppy(value: &str) -> Option<(std::net::IpAddr, u32, u32)> {
    let (addr, bits) = value.split_once('/')?;
    if bits.is_empty() || !bits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let ip = crate::core::v1::validation::parse_ip_sloppy(addr)?;
    let bits: u32 = bits.parse().ok()?;
    let written_v6 = addr.contains(':');
    if bits > if written_v6 { 128 } else { 32 } {
        return None;
    }
    let effective = match (written_v6, ip) {
        (true, std::net::IpAddr::V4(_)) => bits.saturating_sub(96),
        _ => bits,
    };
    Some((ip, bits, effective))
}

/// A label selector as Go's `%#v` prints it in validation messages:
/// `v1.LabelSelector{MatchLabels:map[string]string{"app":"web"}, ...}`.
pub(crate) struct GoSelector<'a>(pub &'a LabelSelector);

impl fmt::Debug for GoSelector<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let labels = crate::labels::GoMap(self.0.match_labels.as_ref());
        write!(
            f,
            "v1.LabelSelector{{MatchLabels:{labels:?}, MatchExpressions:"
        )?;
        let Some(exprs) = &self.0.match_expressions else {
            return f.write_str("[]v1.LabelSelectorRequirement(nil)}");
        };
        let items: Vec<String> = exprs
            .iter()
            .map(|r| {
                format!(
                    "v1.LabelSelectorRequirement{{Key:{:?}, Operator:{:?}, Values:{:?}}}",
                    r.key,
                    r.operator,
                    GoStrings(r.values.as_deref())
                )
            })
            .collect();
        write!(f, "[]v1.LabelSelectorRequirement{{{}}}}}", items.join(", "))
    }
}

/// A string slice as Go's `%#v` prints it: `[]string{"a", "b"}`.
pub(crate) struct GoStrings<'a>(pub Option<&'a [String]>);

impl fmt::Debug for GoStrings<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => f.write_str("[]string(nil)"),
            Some(items) => {
                let quoted: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
                write!(f, "[]string{{{}}}", quoted.join(", "))
            }
        }
    }
}

/// An `IntOrString` as Go's `%#v` prints it:
/// `intstr.IntOrString{Type:1, IntVal:0, StrVal:"25%"}`.
pub(crate) struct GoIntOrString<'a>(pub &'a IntOrString);

impl fmt::Debug for GoIntOrString<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            IntOrString::Int(n) => {
                write!(f, "intstr.IntOrString{{Type:0, IntVal:{n}, StrVal:\"\"}}")
            }
            IntOrString::String(s) => {
                write!(f, "intstr.IntOrString{{Type:1, IntVal:0, StrVal:{s:?}}}")
            }
        }
    }
}

/// The number an `IntOrString` stands for in the rollout checks
/// (`getIntOrPercentValue`): the percentage, the int, or a string's integer
/// value (0 when it is none).
pub(crate) fn int_or_percent_value(value: &IntOrString) -> i64 {
    match value {
        IntOrString::Int(n) => i64::from(*n),
        IntOrString::String(s) => match percent_value(value) {
            Some(p) => p,
            None => s.parse().unwrap_or(0),
        },
    }
}

/// The percentage of a valid `N%` string.
fn percent_value(value: &IntOrString) -> Option<i64> {
    match value {
        IntOrString::String(s) if is_percent(s) => s.trim_end_matches('%').parse().ok(),
        _ => None,
    }
}

/// `IsNotMoreThan100Percent`.
pub(crate) fn not_more_than_100_percent(
    value: &IntOrString,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    if percent_value(value).is_some_and(|p| p > 100) {
        errs.invalid(
            path.clone(),
            GoIntOrString(value),
            "must not be greater than 100%",
        );
    }
}

/// Whether `labels_of_selector` can become a selector (`LabelSelectorAsSelector`
/// succeeds): known operators with the values they need, valid keys and values.
pub(crate) fn selector_converts(selector: &LabelSelector) -> bool {
    let mut errs = FieldErrors::default();
    validate_label_selector(selector, &FieldPath::root(), &mut errs);
    let exprs_ok = selector.match_expressions.iter().flatten().all(|r| {
        let values = r.values.as_deref().unwrap_or_default();
        match r.operator.as_str() {
            "In" | "NotIn" => !values.is_empty(),
            "Exists" | "DoesNotExist" => values.is_empty(),
            _ => false,
        }
    });
    errs.is_empty() && exprs_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_compare_by_value() {
        let q = |s: &str| quantity_value(&Quantity(s.to_owned()));
        assert_eq!(q("500m"), Some(0.5));
        assert_eq!(q("1Ki"), Some(1024.0));
        assert_eq!(q("-1Gi"), Some(-1073741824.0));
        assert_eq!(q("2e3"), Some(2000.0));
        assert_eq!(q("lots"), None);
    }
}
