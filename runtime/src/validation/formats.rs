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
    if !is_dns1123_label(s) {
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

/// Errors of a qualified name (`prefix/name`): label and annotation keys.
pub fn qualified_name_errors(s: &str) -> Vec<String> {
    let (prefix, name) = match s.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, s),
    };
    let mut errs = Vec::new();
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            errs.push("prefix part must be non-empty".to_owned());
        } else {
            errs.extend(
                dns1123_subdomain_errors(prefix)
                    .into_iter()
                    .map(|e| format!("prefix part {e}")),
            );
        }
    }
    if name.is_empty() {
        errs.push("name part must be non-empty".to_owned());
    } else {
        if name.len() > 63 {
            errs.push("name part must be no more than 63 characters".to_owned());
        }
        if name.contains('/') || !is_label_value_body(name) {
            errs.push(
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must start \
                 and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or \
                 '123-abc', regex used for validation is \
                 '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
                    .to_owned(),
            );
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_subdomains() {
        assert!(dns1123_label_errors("my-app-1").is_empty());
        assert!(!dns1123_label_errors("My-App").is_empty());
        assert!(!dns1123_label_errors("a.b").is_empty());
        assert!(!dns1123_label_errors(&"a".repeat(64)).is_empty());
        assert!(dns1123_subdomain_errors("a.b-c.d").is_empty());
        assert!(!dns1123_subdomain_errors("a..b").is_empty());
        assert!(!dns1123_subdomain_errors("").is_empty());
        assert!(!dns1123_subdomain_errors("-a").is_empty());
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
