//! The recorded upstream cases of the control-plane API groups: API Priority
//! and Fairness (flowcontrol), the aggregation layer (apiregistration) and
//! certificate signing requests; one `upstream_cases!` list per kind, as in
//! `validation.rs`.

use super::upstream;
use kapi_api_types::apiregistration::v1::APIService;
use kapi_api_types::certificates::v1::CertificateSigningRequest;
use kapi_api_types::flowcontrol::v1::{FlowSchema, PriorityLevelConfiguration};

// `flowcontrol/fs_catch_all` and `fs_exempt` are recorded but not run:
// upstream prints the mandatory schemas' spec with Go pointers
// (`DistinguisherMethod:(*flowcontrol.FlowDistinguisherMethod)(0xc...)`); we
// print it as JSON.
upstream_cases!(FlowSchema, "flowcontrol":
    fs_spec,
    fs_precedence,
    fs_precedence_one,
    fs_subjects,
    fs_resource_rules,
    fs_nonresource_rules,
);

// `flowcontrol/plc_catch_all` and `plc_exempt_name` are recorded but not run
// for their spec cause, printed with Go pointers; the other causes of
// `plc_exempt_name` are checked by `plc_exempt_type`.
upstream_cases!(PriorityLevelConfiguration, "flowcontrol":
    plc_type,
    plc_limited,
    plc_limited_missing,
    plc_exempt_type,
    plc_reject_queuing,
    plc_queue_missing,
    plc_queuing,
    plc_queuing_hand,
    plc_queuing_entropy,
    plc_queuing_entropy2,
    plc_queuing_over,
    plc_empty,
);

upstream_cases!(APIService, "apiregistration":
    apiservice_spec,
    apiservice_local,
    apiservice_name,
    apiservice_name_bad,
    apiservice_core,
    apiservice_version,
);

// `certificates/csr_request_garbage` is recorded but not run: Go's ASN.1
// decoder words a malformed request in its own terms ("asn1: structure
// error: tags don't match ..."); we say "x509: malformed certificate request".
upstream_cases!(CertificateSigningRequest, "certificates":
    csr_spec,
    csr_usages,
    csr_signer_slash,
    csr_signer_parts,
    csr_signer_domain,
    csr_signer_domain_long,
    csr_signer_path,
    csr_signer_path_chars,
    csr_request_block,
    csr_request_signature,
    csr_request_missing,
);

/// Writes through `/status`, recorded as an update case (`<case>.old.json`
/// created, then `<case>.in.json` PUT to its `/status`) with the same
/// requests `capture.py` sends for a main-endpoint update.
mod status_writes {
    use kapi_api_types::certificates::v1::CertificateSigningRequest;
    use kapi_runtime::Resource;
    use kapi_runtime::scheme::KindEntry;
    use kapi_runtime::validation::FieldErrors;
    use serde_json::Value;

    fn read(case: &str, suffix: &str) -> Value {
        let path = format!(
            "{}/tests/fixtures/validation/{case}.{suffix}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// Our causes for the `/status` write of `case`, against the server's.
    fn check<K: Resource>(case: &str) {
        let decode = |value| {
            KindEntry::of::<K>()
                .ops
                .decode_value(value)
                .expect("the manifest decodes")
                .object
        };
        let mut old = decode(read(case, "old"));
        old.prepare_create();
        assert!(old.admit().is_empty(), "the old object is valid");
        let mut new = decode(read(case, "in"));
        new.prepare_update(Some("status"), old.as_ref());
        let mut errs: FieldErrors = new.admit();
        new.validate_update(old.as_ref(), &mut errs);
        let mut ours: Vec<(String, String, String)> = errs
            .0
            .iter()
            .map(|e| {
                let reason = e.kind.reason().to_owned();
                (reason, e.path.to_string(), e.message.clone())
            })
            .collect();
        ours.sort();
        let status = read(case, "status");
        let text = |c: &Value, k: &str| c[k].as_str().unwrap_or_default().to_owned();
        let mut theirs: Vec<(String, String, String)> = status["details"]["causes"]
            .as_array()
            .expect("causes")
            .iter()
            .map(|c| (text(c, "reason"), text(c, "field"), text(c, "message")))
            .collect();
        theirs.sort();
        assert_eq!(ours, theirs, "{case}");
    }

    #[test]
    fn csr_status() {
        check::<CertificateSigningRequest>("certificates/csr_status");
    }

    #[test]
    fn csr_status_failed() {
        check::<CertificateSigningRequest>("certificates/csr_status_failed");
    }
}
