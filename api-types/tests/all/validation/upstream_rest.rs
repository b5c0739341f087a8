//! The recorded upstream cases of the kinds surveyed last: CSINode and
//! VolumeAttachment updates, runtime class tolerations, HPA updates, CIDR
//! fields, controller revisions, storage capacities, pod bindings and the
//! review kinds; one `upstream_cases!` list per kind, as in `validation.rs`.

use super::upstream;
use kapi_api_types::apps::v1::ControllerRevision;
use kapi_api_types::authorization::v1::{
    LocalSubjectAccessReview, SelfSubjectAccessReview, SubjectAccessReview,
};
use kapi_api_types::autoscaling::v2::HorizontalPodAutoscaler;
use kapi_api_types::core::v1::Node;
use kapi_api_types::networking::v1::NetworkPolicy;
use kapi_api_types::node::v1::RuntimeClass;
use kapi_api_types::storage::v1::{CSINode, CSIStorageCapacity, VolumeAttachment};

// `storage/csinode_update_allocatable` is recorded but not run: upstream
// prints the changed driver's `Allocatable` as a Go pointer.
upstream_cases!(CSINode, "storage":
    csinode_update,
    csinode_update_removed,
    csinode_update_spec,
);

// `node/runtimeclass_tolerations_seconds` is recorded but not run: upstream
// prints the duplicate's `TolerationSeconds` as a Go pointer.
upstream_cases!(RuntimeClass, "node":
    runtimeclass_tolerations_twice,
    runtimeclass_tolerations_update,
);

upstream_cases!(VolumeAttachment, "storage":
    volumeattachment_inline,
    volumeattachment_inline_csi,
    volumeattachment_inline_empty,
    volumeattachment_inline_local,
);

upstream_cases!(HorizontalPodAutoscaler, "autoscaling": hpa_update_min_zero);

// CIDRs are read as kube-apiserver 1.32 reads them: leading zeros allowed in
// IPv4 octets and prefixes, an IPv4-mapped network an IPv4 one.
upstream_cases!(NetworkPolicy, "networking": networkpolicy_cidr_sloppy);

// `core/node_cidr_sloppy_bad` is recorded but not run: with an invalid CIDR
// upstream still judges the families (an internal error naming Go's parse
// error, then the family rule); we stop at the invalid CIDRs.
upstream_cases!(Node, "core": node_cidr_sloppy);

// `authorization/sar_metadata` is recorded but not run: upstream refuses a
// review with metadata, printing it with Go pointers and times; we print it
// as JSON (`status_writes::sar_metadata` checks the rest). A rules review without a namespace and a token
// review without a token are refused with 400, not 422, so no case records
// them.
upstream_cases!(SubjectAccessReview, "authorization":
    sar_empty,
    sar_both,
    sar_selectors_empty,
);

upstream_cases!(SelfSubjectAccessReview, "authorization": ssar_empty, ssar_both);

upstream_cases!(LocalSubjectAccessReview, "authorization":
    lsar_namespace,
    lsar_nonresource,
    lsar_no_namespace,
);

// `apps/controllerrevision_update` is recorded but not run: upstream prints
// the new document's bytes as the client sent them (`{"a": 2}`, spaces
// included); the fixture's JSON, re-encoded, has none.
// `status_writes::controllerrevision_update_bytes` checks it with the bytes
// sent.
upstream_cases!(ControllerRevision, "apps":
    controllerrevision_spec,
    controllerrevision_null,
    controllerrevision_update_revision,
);

upstream_cases!(CSIStorageCapacity, "storage":
    csistoragecapacity_spec,
    csistoragecapacity_empty,
    csistoragecapacity_update,
    csistoragecapacity_update_removed,
    csistoragecapacity_update_spec,
);

/// Writes through `/status`, recorded as an update case (`<case>.old.json`
/// created, then `<case>.in.json` PUT to its `/status`), and the update
/// rules no recorded case can reach.
mod status_writes {
    use kapi_api_types::autoscaling::v2::HorizontalPodAutoscaler;
    use kapi_api_types::storage::v1::VolumeAttachment;
    use kapi_runtime::Resource;
    use kapi_runtime::scheme::KindEntry;
    use kapi_runtime::validation::FieldErrors;
    use serde_json::Value;

    type Cause = (String, String, String);

    fn read(case: &str, suffix: &str) -> Value {
        let path = format!(
            "{}/tests/fixtures/validation/{case}.{suffix}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// Our causes for writing `new` over `old` through `subresource`.
    fn ours<K: Resource>(new: Value, old: Value, subresource: Option<&str>) -> Vec<Cause> {
        let decode = |value| {
            KindEntry::of::<K>()
                .ops
                .decode_value(value)
                .expect("the manifest decodes")
                .object
        };
        let mut old = decode(old);
        old.prepare_create();
        let mut new = decode(new);
        if subresource == Some("status") {
            // As the server's PrepareForUpdate: the stored object with the
            // body's status.
            let mut merged = decode(old.to_json_value().expect("the old object encodes"));
            merged.copy_status_from(new.as_ref());
            new = merged;
        }
        new.prepare_update(subresource, old.as_ref());
        let mut errs: FieldErrors = new.admit();
        new.validate_update(old.as_ref(), &mut errs);
        let mut causes: Vec<Cause> = errs
            .0
            .iter()
            .filter(|e| !e.path.as_str().starts_with("metadata."))
            .map(|e| {
                let reason = e.kind.reason().to_owned();
                (reason, e.path.to_string(), e.message.clone())
            })
            .collect();
        causes.sort();
        causes
    }

    /// Our causes for the `/status` write of `case`, against the server's.
    pub(super) fn check<K: Resource>(case: &str) {
        let status = read(case, "status");
        let text = |c: &Value, k: &str| c[k].as_str().unwrap_or_default().to_owned();
        let mut theirs: Vec<Cause> = status["details"]["causes"]
            .as_array()
            .expect("causes")
            .iter()
            .map(|c| (text(c, "reason"), text(c, "field"), text(c, "message")))
            .filter(|(_, field, _)| !field.starts_with("metadata."))
            .collect();
        theirs.sort();
        let ours = ours::<K>(read(case, "in"), read(case, "old"), Some("status"));
        assert_eq!(ours, theirs, "{case}");
    }

    #[test]
    fn hpa_status() {
        check::<HorizontalPodAutoscaler>("autoscaling/hpa_status");
    }

    #[test]
    fn volumeattachment_status() {
        check::<VolumeAttachment>("storage/volumeattachment_status");
    }

    /// At the limits, and a spec change that `/status` drops: accepted.
    #[test]
    fn volumeattachment_status_edge() {
        let case = "storage/volumeattachment_status_edge";
        let causes = ours::<VolumeAttachment>(read(case, "in"), read(case, "old"), Some("status"));
        assert_eq!(causes, Vec::<Cause>::new());
    }

    /// `apps/controllerrevision_update` with the document's bytes as the
    /// client sent them: upstream prints them in hex.
    #[test]
    fn controllerrevision_update_bytes() {
        use kapi_api_types::apps::v1::ControllerRevision;
        let case = "apps/controllerrevision_update";
        let old: ControllerRevision = serde_json::from_value(read(case, "old")).expect("old");
        let mut new: ControllerRevision = serde_json::from_value(read(case, "in")).expect("new");
        new.data.raw = Some(kapi_runtime::ByteString(br#"{"a": 2}"#.to_vec()));
        let mut errs = FieldErrors::default();
        Resource::validate_update(&new, &old, &mut errs);
        let status = read(case, "status");
        let cause = &status["details"]["causes"][0];
        assert_eq!(errs.0.len(), 1);
        assert_eq!(
            errs.0[0].path.as_str(),
            cause["field"].as_str().unwrap_or_default()
        );
        assert_eq!(
            errs.0[0].message,
            cause["message"].as_str().unwrap_or_default()
        );
    }

    /// A review with metadata: refused at `metadata`, as upstream does.
    #[test]
    fn sar_metadata() {
        use kapi_api_types::authorization::v1::SubjectAccessReview;
        let case = "authorization/sar_metadata";
        let mut review = KindEntry::of::<SubjectAccessReview>()
            .ops
            .decode_value(read(case, "in"))
            .expect("the review decodes")
            .object;
        let errs = review.admit();
        let status = read(case, "status");
        let cause = &status["details"]["causes"][0];
        assert_eq!(errs.0.len(), 1, "{}", errs.summary());
        assert_eq!(
            errs.0[0].path.as_str(),
            cause["field"].as_str().unwrap_or_default()
        );
        let theirs = cause["message"].as_str().unwrap_or_default();
        assert!(theirs.ends_with(": must be empty"), "{theirs}");
        assert!(errs.0[0].message.ends_with(": must be empty"));
    }

    /// An autoscaler stored with `minReplicas: 0` (the HPAScaleToZero gate
    /// was on when it was written) keeps it on update; the reference server,
    /// gate off, cannot store one, so this is upstream's rule unrecorded:
    /// only the `minReplicas` bound goes, the metrics rule stays.
    #[test]
    fn hpa_update_keeps_min_zero() {
        let new = read("autoscaling/hpa_update_min_zero", "in");
        let mut old = new.clone();
        old["spec"]["scaleTargetRef"]["name"] = Value::from("web");
        let causes = ours::<HorizontalPodAutoscaler>(new, old, None);
        let fields: Vec<&str> = causes.iter().map(|c| c.1.as_str()).collect();
        assert_eq!(fields, ["spec.metrics", "spec.scaleTargetRef.name"]);
    }
}
