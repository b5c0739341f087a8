//! The in-tree network and block drivers with rules of their own: iSCSI
//! names, Flocker datasets, Quobyte registries, Fibre Channel targets.

use kapi_runtime::validation::{FieldErrors, FieldPath, inclusive_range_error};

use crate::core::v1::pod::volume_block::{FCVolumeSource, ISCSIVolumeSource};
use crate::core::v1::pod::volume_shared::{FlockerVolumeSource, QuobyteVolumeSource};
use crate::validation::GoStrings;

/// `validateISCSIVolumeSource`, with the volume-wide length check of the
/// initiator's `<volume name>:<target portal>`.
pub(super) fn validate_iscsi(
    iscsi: &ISCSIVolumeSource,
    name: &str,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let iscsi_path = path.child("iscsi");
    if !iscsi.iqn.is_empty() {
        let iqn_path = iscsi_path.child("iqn");
        if let Some(detail) = initiator_format_error(&iscsi.iqn) {
            errs.invalid(iqn_path, iscsi.iqn.as_str(), detail);
        }
    }
    if !(0..=255).contains(&iscsi.lun) {
        errs.invalid(
            iscsi_path.child("lun"),
            iscsi.lun,
            &inclusive_range_error(0, 255),
        );
    }
    let chap = iscsi.chap_auth_discovery.unwrap_or_default()
        || iscsi.chap_auth_session.unwrap_or_default();
    if chap && iscsi.secret_ref.is_none() {
        errs.required(iscsi_path.child("secretRef"), "");
    }
    if let Some(initiator) = &iscsi.initiator_name {
        if let Some(detail) = initiator_format_error(initiator) {
            errs.invalid(
                iscsi_path.child("initiatorname"),
                initiator.as_str(),
                detail,
            );
        }
        if name.len() + 1 + iscsi.target_portal.len() > 64 {
            errs.invalid(
                path.child("name"),
                name,
                "Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters \
                 if iscsi.initiatorName is specified.",
            );
        }
    }
}

/// What is wrong with an iSCSI qualified name (`iqn.`, `eui.` or `naa.`
/// form), as upstream's patterns see it.
pub(crate) fn initiator_format_error(name: &str) -> Option<&'static str> {
    let alnum = |s: &str| s.bytes().all(|c| c.is_ascii_alphanumeric());
    // The byte after the prefix is any character (the patterns' `.`).
    let tail = |prefix_len: usize| {
        name.get(prefix_len + 1..)
            .filter(|_| name.len() > prefix_len)
    };
    let ok = if name.starts_with("iqn") {
        // Unanchored at the start: any `iqn.` occurrence may begin the match.
        name.match_indices("iqn.")
            .any(|(at, _)| iqn_tail(&name[at + 4..]))
    } else if name.starts_with("eui") {
        tail(3).is_some_and(|t| t.len() == 16 && alnum(t))
    } else if name.starts_with("naa") {
        tail(3).is_some_and(|t| t.len() == 32 && alnum(t))
    } else {
        return Some("must be valid format starting with iqn, eui, or naa");
    };
    (!ok).then_some("must be valid format")
}

/// `yyyy-mm.<naming authority>:<name>` to the end of the text.
fn iqn_tail(rest: &str) -> bool {
    let b = rest.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    if !(digits(0..4) && b.get(4) == Some(&b'-') && digits(5..7) && b.get(7) == Some(&b'.')) {
        return false;
    }
    let Some((authority, name)) = rest[8..].split_once(':') else {
        return false;
    };
    let authority_ok = !authority.is_empty()
        && authority
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'.');
    let name_ok = !name.is_empty()
        && !name
            .chars()
            .any(|c| c.is_whitespace() || ",;*&$|".contains(c));
    authority_ok && name_ok
}

/// `validateFlockerVolumeSource`: a dataset name or UUID, not both.
pub(crate) fn validate_flocker(
    flocker: &FlockerVolumeSource,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let name = flocker.dataset_name.as_deref().unwrap_or_default();
    let uuid = flocker.dataset_uuid.as_deref().unwrap_or_default();
    if name.is_empty() && uuid.is_empty() {
        errs.required(
            path.clone(),
            "one of datasetName and datasetUUID is required",
        );
    }
    if !name.is_empty() && !uuid.is_empty() {
        errs.invalid(
            path.clone(),
            "resource",
            "datasetName and datasetUUID can not be specified simultaneously",
        );
    }
    if name.contains('/') {
        errs.invalid(path.child("datasetName"), name, "must not contain '/'");
    }
}

/// `validateQuobyteVolumeSource`: `host:port` pairs, a short tenant.
pub(crate) fn validate_quobyte(
    quobyte: &QuobyteVolumeSource,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    const PAIRS: &str = "must be a host:port pair or multiple pairs separated by commas";
    let tenant = quobyte.tenant.as_deref().unwrap_or_default();
    if quobyte.registry.is_empty() {
        errs.required(path.child("registry"), PAIRS);
    } else if tenant.len() >= 65 {
        errs.required(
            path.child("tenant"),
            "must be a UUID and may not exceed a length of 64 characters",
        );
    } else {
        for pair in quobyte.registry.split(',') {
            if !is_host_port(pair) {
                errs.invalid(path.child("registry"), quobyte.registry.as_str(), PAIRS);
            }
        }
    }
}

/// Whether Go's `net.SplitHostPort` accepts the text: `host:port` or
/// `[host]:port`, one colon outside brackets.
fn is_host_port(pair: &str) -> bool {
    if let Some(rest) = pair.strip_prefix('[') {
        let Some((host, after)) = rest.split_once(']') else {
            return false;
        };
        return !host.contains('[') && after.starts_with(':') && !after[1..].contains(':');
    }
    let mut parts = pair.splitn(3, ':');
    let host = parts.next().unwrap_or_default();
    matches!((parts.next(), parts.next()), (Some(_), None))
        && !host.contains('[')
        && !host.contains(']')
}

/// `validateFCVolumeSource`: target WWNs with a LUN, or WWIDs.
pub(crate) fn validate_fc(fc: &FCVolumeSource, path: &FieldPath, errs: &mut FieldErrors) {
    let wwns = fc.target_wwns.as_deref().unwrap_or_default();
    let wwids = fc.wwids.as_deref().unwrap_or_default();
    if wwns.is_empty() && wwids.is_empty() {
        errs.required(
            path.child("targetWWNs"),
            "must specify either targetWWNs or wwids, but not both",
        );
    }
    if !wwns.is_empty() && !wwids.is_empty() {
        errs.invalid(
            path.child("targetWWNs"),
            GoStrings(Some(wwns)),
            "targetWWNs and wwids can not be specified simultaneously",
        );
    }
    if !wwns.is_empty() {
        match fc.lun {
            None => errs.required(
                path.child("lun"),
                "lun is required if targetWWNs is specified",
            ),
            Some(lun) if !(0..=255).contains(&lun) => {
                errs.invalid(path.child("lun"), lun, &inclusive_range_error(0, 255))
            }
            Some(_) => {}
        }
    }
}
