//! The checks pkg/apis/flowcontrol/validation makes of a
//! PriorityLevelConfiguration: the type and the settings it allows, the
//! limited level's shares and percentages, and its queues, whose shuffle
//! sharding must fit in a 64-bit hash.

use kapi_runtime::validation::{FieldErrors, FieldPath};

use super::super::prioritylevelconfiguration::{
    ExemptPriorityLevelConfiguration, LimitResponse, LimitedPriorityLevelConfiguration,
    PriorityLevelConfiguration, PriorityLevelConfigurationSpec, QueuingConfiguration,
};
use super::flowschema::condition_types;
use super::mandatory;

/// The most queues a level may have (10^7).
const MAX_QUEUES: i32 = 10_000_000;

/// The bits of hash the shuffle sharding of a flow's hand may use.
const MAX_HASH_BITS: f64 = 60.0;

/// The `PriorityLevelConfiguration` hook (`ValidatePriorityLevelConfiguration`
/// for v1 requests, where a limited level may have zero shares): the spec, the
/// fixed spec of the mandatory `exempt` and `catch-all` levels, and the status
/// conditions.
pub(crate) fn validate_priority_level(
    level: &PriorityLevelConfiguration,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let name = level.metadata.name.as_deref().unwrap_or_default();
    let spec_path = path.child("spec");
    validate_spec(&level.spec, name, &spec_path, errs);
    mandatory::check_priority_level(name, &level.spec, &spec_path, errs);
    let types = level
        .status
        .conditions
        .iter()
        .flatten()
        .map(|c| c.type_.as_deref());
    condition_types(types, &path.child("status").child("conditions"), errs);
}

/// `ValidatePriorityLevelConfigurationSpec`: only the level named `exempt` is
/// of type `Exempt`; each type has its own settings and not the other's.
fn validate_spec(
    spec: &PriorityLevelConfigurationSpec,
    name: &str,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let type_path = path.child("type");
    if (name == "exempt") != (spec.type_ == "Exempt") {
        let detail = "type must be 'Exempt' if and only if name is 'exempt'";
        errs.invalid(type_path.clone(), spec.type_.as_str(), detail);
    }
    match spec.type_.as_str() {
        "Exempt" => {
            if spec.limited.is_some() {
                let detail = "must be nil if the type is not Limited";
                errs.forbidden(path.child("limited"), detail);
            }
            if let Some(exempt) = &spec.exempt {
                validate_exempt(exempt, &path.child("exempt"), errs);
            }
        }
        "Limited" => {
            if spec.exempt.is_some() {
                let detail = "must be nil if the type is Limited";
                errs.forbidden(path.child("exempt"), detail);
            }
            match &spec.limited {
                None => {
                    let detail = "must not be empty when type is Limited";
                    errs.required(path.child("limited"), detail);
                }
                Some(limited) => validate_limited(limited, &path.child("limited"), errs),
            }
        }
        other => errs.not_supported(type_path, other, &["Exempt", "Limited"]),
    }
}

/// `ValidateExemptPriorityLevelConfiguration`.
fn validate_exempt(
    exempt: &ExemptPriorityLevelConfiguration,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    if let Some(shares) = exempt.nominal_concurrency_shares.filter(|s| *s < 0) {
        let shares_path = path.child("nominalConcurrencyShares");
        errs.invalid(shares_path, shares, "must be a non-negative integer");
    }
    lendable_percent(exempt.lendable_percent, path, errs);
}

/// A lendable percentage, when set, is 0 to 100.
fn lendable_percent(percent: Option<i32>, path: &FieldPath, errs: &mut FieldErrors) {
    if let Some(percent) = percent.filter(|p| !(0..=100).contains(p)) {
        let detail = "must be between 0 and 100, inclusive";
        errs.invalid(path.child("lendablePercent"), percent, detail);
    }
}

/// `ValidateLimitedPriorityLevelConfiguration` as a v1 request gets it: zero
/// shares are allowed, negative ones are not.
fn validate_limited(
    limited: &LimitedPriorityLevelConfiguration,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let shares = limited.nominal_concurrency_shares.unwrap_or_default();
    if shares < 0 {
        let shares_path = path.child("nominalConcurrencyShares");
        errs.invalid(shares_path, shares, "must be a non-negative integer");
    }
    validate_limit_response(&limited.limit_response, &path.child("limitResponse"), errs);
    lendable_percent(limited.lendable_percent, path, errs);
    if let Some(percent) = limited.borrowing_limit_percent.filter(|p| *p < 0) {
        let detail = "if specified, must be a non-negative integer";
        errs.invalid(path.child("borrowingLimitPercent"), percent, detail);
    }
}

/// `ValidateLimitResponse`: queues only for type `Queue`, where they are
/// required. (Upstream's messages say `Limited` where they mean `Queue`.)
fn validate_limit_response(response: &LimitResponse, path: &FieldPath, errs: &mut FieldErrors) {
    match response.type_.as_str() {
        "Reject" => {
            if response.queuing.is_some() {
                let detail = "must be nil if limited.limitResponse.type is not Limited";
                errs.forbidden(path.child("queuing"), detail);
            }
        }
        "Queue" => match &response.queuing {
            None => {
                let detail = "must not be empty if limited.limitResponse.type is Limited";
                errs.required(path.child("queuing"), detail);
            }
            Some(queuing) => validate_queuing(queuing, &path.child("queuing"), errs),
        },
        other => errs.not_supported(path.child("type"), other, &["Queue", "Reject"]),
    }
}

/// `ValidatePriorityLevelQueuingConfiguration`: positive sizes, at most 10^7
/// queues, and a hand that fits the deck and the hash.
fn validate_queuing(queuing: &QueuingConfiguration, path: &FieldPath, errs: &mut FieldErrors) {
    let length = queuing.queue_length_limit;
    if length <= 0 {
        errs.invalid(path.child("queueLengthLimit"), length, "must be positive");
    }
    let queues = queuing.queues;
    if queues <= 0 {
        errs.invalid(path.child("queues"), queues, "must be positive");
    } else if queues > MAX_QUEUES {
        let detail = format!("must not be greater than {MAX_QUEUES}");
        errs.invalid(path.child("queues"), queues, &detail);
    }
    let hand = queuing.hand_size;
    let hand_path = path.child("handSize");
    if hand <= 0 {
        errs.invalid(hand_path, hand, "must be positive");
    } else if hand > queues {
        let detail = format!("should not be greater than queues ({queues})");
        errs.invalid(hand_path, hand, &detail);
    } else if entropy_bits(queues, hand) > MAX_HASH_BITS {
        let detail = format!(
            "required entropy bits of deckSize {queues} and handSize {hand} should not be greater than {MAX_HASH_BITS}"
        );
        errs.invalid(hand_path, hand, &detail);
    }
}

/// The bits of hash dealing a hand of `hand` from `deck` queues takes:
/// `ceil(log2(deck) * hand)`.
fn entropy_bits(deck: i32, hand: i32) -> f64 {
    (f64::from(deck).log2() * f64::from(hand)).ceil()
}

#[cfg(test)]
mod tests {
    use super::entropy_bits;

    #[test]
    fn entropy_of_hands() {
        assert_eq!(entropy_bits(64, 8), 48.0);
        assert_eq!(entropy_bits(128, 10), 70.0);
        assert_eq!(entropy_bits(1, 1), 0.0);
    }
}
