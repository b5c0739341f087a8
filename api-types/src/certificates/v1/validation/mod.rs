//! The checks pkg/apis/certificates/validation makes of a
//! CertificateSigningRequest written through v1: a signed PKCS#10 request,
//! known usages given once, a qualified signer name, a validity of at least
//! ten minutes, well-formed conditions and an issued chain of certificates.
//!
//! Upstream relaxes some of these on updates of objects that already break
//! them (stored through older versions); objects stored through v1 never do,
//! so the relaxations are left out.

pub(crate) mod pem;

use kapi_runtime::ByteString;
use kapi_runtime::validation::{
    FieldErrors, FieldPath, dns1123_label_errors, dns1123_subdomain_errors,
};

use super::certificatesigningrequest::{
    CertificateSigningRequest, CertificateSigningRequestCondition,
};
use crate::validation::Raw;

/// The key usages a request may ask for, sorted.
const USAGES: &[&str] = &[
    "any",
    "cert sign",
    "client auth",
    "code signing",
    "content commitment",
    "crl sign",
    "data encipherment",
    "decipher only",
    "digital signature",
    "email protection",
    "encipher only",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "key agreement",
    "key encipherment",
    "microsoft sgc",
    "netscape sgc",
    "ocsp signing",
    "s/mime",
    "server auth",
    "signing",
    "timestamping",
];

/// The longest a signer name's domain may be.
const MAX_DOMAIN_LENGTH: usize = 253;

/// The `CertificateSigningRequest` hook (`validateCertificateSigningRequest`).
pub(crate) fn validate_csr(
    csr: &CertificateSigningRequest,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let spec = &csr.spec;
    let spec_path = path.child("spec");
    if let Some(detail) = pem::request_error(bytes(spec.request.as_ref())) {
        let value = GoBytes(spec.request.as_ref());
        errs.invalid(spec_path.child("request"), Raw(&value.to_string()), &detail);
    }
    validate_usages(spec.usages.as_deref().unwrap_or_default(), &spec_path, errs);
    let signer_path = spec_path.child("signerName");
    if spec.signer_name == "kubernetes.io/legacy-unknown" {
        let detail = "the legacy signerName is not allowed via this API version";
        errs.invalid(signer_path, spec.signer_name.as_str(), detail);
    } else {
        validate_signer_name(&spec.signer_name, &signer_path, errs);
    }
    if let Some(seconds) = spec.expiration_seconds.filter(|s| *s < 600) {
        let detail = "may not specify a duration less than 600 seconds (10 minutes)";
        errs.invalid(spec_path.child("expirationSeconds"), seconds, detail);
    }
    let status_path = path.child("status");
    let conditions = csr.status.conditions.as_deref().unwrap_or_default();
    validate_conditions(conditions, &status_path.child("conditions"), errs);
    if let Some(detail) = pem::certificate_error(bytes(csr.status.certificate.as_ref())) {
        errs.invalid(
            status_path.child("certificate"),
            "<certificate data>",
            &detail,
        );
    }
}

/// The bytes of an optional `[]byte` field.
fn bytes(value: Option<&ByteString>) -> &[u8] {
    value.map_or(&[], |b| b.0.as_slice())
}

/// A `[]byte` as Go's `%#v` prints it: `[]byte{0x2d, 0xa}`, `[]byte(nil)`.
struct GoBytes<'a>(Option<&'a ByteString>);

impl std::fmt::Display for GoBytes<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Some(bytes) = self.0 else {
            return f.write_str("[]byte(nil)");
        };
        let items: Vec<String> = bytes.0.iter().map(|b| format!("{b:#x}")).collect();
        write!(f, "[]byte{{{}}}", items.join(", "))
    }
}

/// At least one usage; each known, and given once.
fn validate_usages(usages: &[String], spec_path: &FieldPath, errs: &mut FieldErrors) {
    let path = spec_path.child("usages");
    if usages.is_empty() {
        errs.required(path.clone(), "");
    }
    for (i, usage) in usages.iter().enumerate() {
        if !USAGES.contains(&usage.as_str()) {
            errs.not_supported(path.index(i), usage, USAGES);
        }
    }
    for (i, usage) in usages.iter().enumerate() {
        if usages[..i].contains(usage) {
            errs.duplicate(path.index(i), usage.as_str());
        }
    }
}

/// `ValidateSignerName`: `<domain>/<path>`, the domain of at least two DNS
/// labels and at most 253 characters, the path of dot-separated DNS
/// subdomains. Errors about one part show that part as the value.
pub(crate) fn validate_signer_name(name: &str, path: &FieldPath, errs: &mut FieldErrors) {
    if name.is_empty() {
        errs.required(path.clone(), "");
        return;
    }
    let Some((domain, signer)) = name.split_once('/').filter(|(_, s)| !s.contains('/')) else {
        let detail =
            "must be a fully qualified domain and path of the form 'example.com/signer-name'";
        errs.invalid(path.clone(), name, detail);
        return;
    };
    if domain.len() > MAX_DOMAIN_LENGTH {
        errs.too_long(path.clone(), MAX_DOMAIN_LENGTH);
    }
    let labels: Vec<&str> = domain.split('.').collect();
    for label in &labels {
        for detail in dns1123_label_errors(label) {
            let detail = format!("validating label {label:?}: {detail}");
            errs.invalid(path.clone(), domain, &detail);
        }
    }
    if labels.len() < 2 {
        let detail = "should be a domain with at least two segments separated by dots";
        errs.invalid(path.clone(), domain, detail);
    }
    for label in signer.split('.') {
        for detail in dns1123_subdomain_errors(label) {
            let detail = format!("validating label {label:?}: {detail}");
            errs.invalid(path.clone(), signer, &detail);
        }
    }
}

/// `validateConditions`: a type and a status on each; `Approved`, `Denied`
/// and `Failed` only `True`; not both `Approved` and `Denied`; each type once.
fn validate_conditions(
    conditions: &[CertificateSigningRequestCondition],
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let (mut approved, mut denied) = (false, false);
    for (i, condition) in conditions.iter().enumerate() {
        let kind = condition.type_.as_str();
        let type_path = path.index(i).child("type");
        if kind.is_empty() {
            errs.required(type_path.clone(), "");
        }
        let allowed: &[&str] = if matches!(kind, "Approved" | "Denied" | "Failed") {
            &["True"]
        } else {
            &["False", "True", "Unknown"]
        };
        let status_path = path.index(i).child("status");
        if condition.status.is_empty() {
            errs.required(status_path, "");
        } else if !allowed.contains(&condition.status.as_str()) {
            errs.not_supported(status_path, &condition.status, allowed);
        }
        let exclusive = match kind {
            "Approved" => {
                approved = true;
                denied
            }
            "Denied" => {
                denied = true;
                approved
            }
            _ => false,
        };
        if exclusive {
            let detail = "Approved and Denied conditions are mutually exclusive";
            errs.invalid(type_path.clone(), kind, detail);
        }
        if conditions[..i].iter().any(|c| c.type_ == kind) {
            errs.duplicate(type_path, kind);
        }
    }
}
