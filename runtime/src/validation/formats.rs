//! The format checks of k8s.io/apimachinery/pkg/util/validation, returning the same
//! messages so that kubectl users read what they would read from Kubernetes.

const DNS1123_LABEL_MAX: usize = 63;
const DNS1123_SUBDOMAIN_MAX: usize = 253;
const LABEL_VALUE_MAX: usize = 63;

fn is_alnum(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

fn is_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && is_alnum(b[0])
        && is_alnum(b[b.len() - 1])
        && b.iter().all(|&c| is_alnum(c) || c == b'-')
}

/// Errors of an RFC 1123 label (Namespace names, Service names, ...).
pub fn dns1123_label_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > DNS1123_LABEL_MAX {
        errs.push(format!(
            "must be no more than {DNS1123_LABEL_MAX} characters"
        ));
    }
    if !is_dns1123_label(s) && !s.is_empty() && s.split('.').all(is_dns1123_label) {
        // A subdomain, not a label: the dots are the only problem.
        errs.push("must not contain dots".to_owned());
    } else if !is_dns1123_label(s) {
        errs.push(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', \
             and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', \
             regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
                .to_owned(),
        );
    }
    errs
}

/// Errors of an RFC 1035 label (Service names): a letter first.
pub fn dns1035_label_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > DNS1123_LABEL_MAX {
        errs.push(format!(
            "must be no more than {DNS1123_LABEL_MAX} characters"
        ));
    }
    if !is_dns1123_label(s) || !s.starts_with(|c: char| c.is_ascii_lowercase()) {
        errs.push(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with \
             an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or \
             'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
                .to_owned(),
        );
    }
    errs
}

/// Errors of a name that must fit one URL path segment (upstream's
/// `IsValidPathSegmentName`): what every object name must satisfy, and all a
/// core Event's name must.
pub fn path_segment_errors(s: &str) -> Vec<String> {
    if s == "." || s == ".." {
        return vec![format!("may not be '{s}'")];
    }
    ["/", "%"]
        .into_iter()
        .filter(|bad| s.contains(bad))
        .map(|bad| format!("may not contain '{bad}'"))
        .collect()
}

/// Errors of an RFC 1123 subdomain (most object names).
pub fn dns1123_subdomain_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > DNS1123_SUBDOMAIN_MAX {
        errs.push(format!(
            "must be no more than {DNS1123_SUBDOMAIN_MAX} characters"
        ));
    }
    if s.is_empty() || !s.split('.').all(is_dns1123_label) {
        errs.push(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' \
             or '.', and must start and end with an alphanumeric character (e.g. 'example.com', \
             regex used for validation is \
             '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
                .to_owned(),
        );
    }
    errs
}

fn is_label_value_body(s: &str) -> bool {
    let b = s.as_bytes();
    b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// Errors of a qualified name (`prefix/name`): label and annotation keys
/// (`IsQualifiedName`).
pub fn qualified_name_errors(s: &str) -> Vec<String> {
    const NAME_RULE: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must \
         start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or \
         '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    let parts: Vec<&str> = s.split('/').collect();
    let mut errs = Vec::new();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_owned());
            } else {
                errs.extend(
                    dns1123_subdomain_errors(prefix)
                        .into_iter()
                        .map(|e| format!("prefix part {e}")),
                );
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {NAME_RULE} with an optional DNS subdomain prefix and '/' (e.g. \
                 'example.com/MyName')"
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 characters".to_owned());
    }
    if name.is_empty() || !is_label_value_body(name) {
        errs.push(format!("name part {NAME_RULE}"));
    }
    errs
}

/// Errors of a label value (may be empty).
pub fn label_value_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > LABEL_VALUE_MAX {
        errs.push(format!("must be no more than {LABEL_VALUE_MAX} characters"));
    }
    if !s.is_empty() && !is_label_value_body(s) {
        errs.push(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' \
             or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or \
             'my_value',  or '12345', regex used for validation is \
             '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
                .to_owned(),
        );
    }
    errs
}

/// `InclusiveRangeError`: the detail of a number outside `[lo, hi]`.
pub fn inclusive_range_error(lo: i64, hi: i64) -> String {
    format!("must be between {lo} and {hi}, inclusive")
}

/// Errors of a port number (`IsValidPortNum`): 1 to 65535.
pub fn port_number_errors(port: i64) -> Vec<String> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec![inclusive_range_error(1, 65535)]
    }
}

/// Errors of a port name (`IsValidPortName`, an IANA_SVC_NAME): at most 15
/// lower-case letters, digits and single inner hyphens, with a letter.
pub fn port_name_errors(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if name.len() > 15 {
        errs.push("must be no more than 15 characters".to_owned());
    }
    if name.is_empty() || !name.bytes().all(|c| is_alnum(c) || c == b'-') {
        errs.push(
            "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_owned(),
        );
    }
    if !name.bytes().any(|c| c.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".to_owned());
    }
    if name.contains("--") {
        errs.push("must not contain consecutive hyphens (-)".to_owned());
    }
    if name.starts_with('-') || name.ends_with('-') {
        errs.push("must not begin or end with a hyphen (-)".to_owned());
    }
    errs
}

/// Errors of a ConfigMap or Secret data key (`IsConfigMapKey`).
pub fn config_key_errors(key: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if key.len() > DNS1123_SUBDOMAIN_MAX {
        errs.push(format!(
            "must be no more than {DNS1123_SUBDOMAIN_MAX} characters"
        ));
    }
    let charset = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_');
    if key.is_empty() || !key.bytes().all(charset) {
        errs.push(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. \
             'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is \
             '[-._a-zA-Z0-9]+')"
                .to_owned(),
        );
    }
    match key {
        "." => errs.push("must not be '.'".to_owned()),
        ".." => errs.push("must not be '..'".to_owned()),
        k if k.starts_with("..") => errs.push("must not start with '..'".to_owned()),
        _ => {}
    }
    errs
}

/// Errors of an environment variable name under the relaxed rule Kubernetes
/// 1.32 applies (`IsRelaxedEnvVarName`): printable ASCII other than `=`.
pub fn env_var_name_errors(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if name.is_empty() {
        errs.push("environment variable name must be non-empty".to_owned());
    }
    if name.chars().any(|c| !(' '..='~').contains(&c) || c == '=') {
        errs.push(
            "a valid environment variable name must consist only of printable ASCII characters \
             other than '='"
                .to_owned(),
        );
    }
    errs
}

/// Errors of a C identifier (`IsCIdentifier`).
pub fn c_identifier_errors(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let head = |c: u8| c.is_ascii_alphabetic() || c == b'_';
    if !b.is_empty() && head(b[0]) && b.iter().all(|&c| head(c) || c.is_ascii_digit()) {
        return Vec::new();
    }
    vec![
        "a valid C identifier must start with alphabetic character or '_', followed by a string \
         of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex \
         used for validation is '[A-Za-z_][A-Za-z0-9_]*')"
            .to_owned(),
    ]
}

/// Whether `s` is a percentage as `IntOrString` fields take them (`25%`).
pub fn is_percent(s: &str) -> bool {
    s.strip_suffix('%')
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_subdomains() {
        assert!(dns1123_label_errors("my-app-1").is_empty());
        assert!(!dns1123_label_errors("My-App").is_empty());
        assert_eq!(dns1123_label_errors("a.b"), ["must not contain dots"]);
        assert_eq!(dns1123_label_errors("A.b").len(), 1);
        assert_ne!(dns1123_label_errors("A.b"), ["must not contain dots"]);
        assert!(!dns1123_label_errors(&"a".repeat(64)).is_empty());
        assert!(dns1123_subdomain_errors("a.b-c.d").is_empty());
        assert!(!dns1123_subdomain_errors("a..b").is_empty());
        assert!(!dns1123_subdomain_errors("").is_empty());
        assert!(!dns1123_subdomain_errors("-a").is_empty());
    }

    #[test]
    fn ports_keys_and_env_names() {
        assert!(port_name_errors("http-2").is_empty());
        assert_eq!(port_name_errors("Http_Port").len(), 1);
        assert_eq!(port_name_errors("a--b").len(), 1);
        assert_eq!(port_number_errors(0).len(), 1);
        assert!(config_key_errors("tls.crt").is_empty());
        assert_eq!(config_key_errors("..x").len(), 1);
        assert!(env_var_name_errors("1_OK-too").is_empty());
        assert_eq!(env_var_name_errors("A=B").len(), 1);
        assert!(c_identifier_errors("_a1").is_empty());
        assert!(is_percent("25%") && !is_percent("%") && !is_percent("2.5%"));
    }

    #[test]
    fn label_keys_and_values() {
        assert!(qualified_name_errors("app.kubernetes.io/name").is_empty());
        assert!(qualified_name_errors("App_1").is_empty());
        assert!(!qualified_name_errors("/x").is_empty());
        assert!(!qualified_name_errors("a/b/c").is_empty());
        assert!(!qualified_name_errors("-x").is_empty());
        assert!(label_value_errors("").is_empty());
        assert!(label_value_errors("v1.2_3").is_empty());
        assert!(!label_value_errors("a b").is_empty());
    }
}
