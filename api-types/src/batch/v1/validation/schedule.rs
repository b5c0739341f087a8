//! Cron schedules as the CronJob controller parses them (robfig/cron v3's
//! standard parser: five fields or an `@` descriptor), with its error texts,
//! which Kubernetes returns as the validation message.

/// Bounds and names of one schedule field.
struct Field {
    min: u32,
    max: u32,
    names: &'static [&'static str],
    /// The number of the first name.
    first_name: u32,
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

const FIELDS: [Field; 5] = [
    Field {
        min: 0,
        max: 59,
        names: &[],
        first_name: 0,
    },
    Field {
        min: 0,
        max: 23,
        names: &[],
        first_name: 0,
    },
    Field {
        min: 1,
        max: 31,
        names: &[],
        first_name: 0,
    },
    Field {
        min: 1,
        max: 12,
        names: &MONTHS,
        first_name: 1,
    },
    Field {
        min: 0,
        max: 6,
        names: &DAYS,
        first_name: 0,
    },
];

/// The error of a schedule that does not parse, `None` when it does.
pub(crate) fn schedule_error(spec: &str) -> Option<String> {
    if spec.is_empty() {
        return Some("empty spec string".to_owned());
    }
    let mut spec = spec;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        let (zone_part, rest) = spec.split_once(' ').unwrap_or((spec, ""));
        let zone = zone_part
            .split_once('=')
            .map(|(_, z)| z)
            .unwrap_or_default();
        if let Some(e) = super::time_zone_error(zone) {
            return Some(format!("provided bad location {zone}: {e}"));
        }
        spec = rest.trim();
    }
    if spec.starts_with('@') {
        return descriptor_error(spec);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Some(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    fields
        .iter()
        .zip(&FIELDS)
        .find_map(|(text, field)| field_error(text, field))
}

/// `@yearly`, `@every 1h30m` and the like.
fn descriptor_error(spec: &str) -> Option<String> {
    const NAMED: [&str; 7] = [
        "@yearly",
        "@annually",
        "@monthly",
        "@weekly",
        "@daily",
        "@midnight",
        "@hourly",
    ];
    if NAMED.contains(&spec) {
        return None;
    }
    if let Some(duration) = spec.strip_prefix("@every ") {
        if is_go_duration(duration) {
            return None;
        }
        return Some(format!(
            "failed to parse duration {spec}: time: invalid duration {duration:?}"
        ));
    }
    Some(format!("unrecognized descriptor: {spec}"))
}

/// Whether `s` is a Go duration such as `1h30m` or `90s`.
fn is_go_duration(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    if s == "0" {
        return true;
    }
    let mut rest = s;
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if number_len == 0 || rest[..number_len] == *"." {
            return false;
        }
        rest = &rest[number_len..];
        let unit = ["ns", "us", "µs", "μs", "ms", "s", "m", "h"]
            .into_iter()
            .find(|u| rest.starts_with(u) && !(*u == "m" && rest.starts_with("ms")));
        match unit {
            Some(u) => rest = &rest[u.len()..],
            None => return false,
        }
    }
    true
}

/// The first error of a comma-separated field.
fn field_error(text: &str, field: &Field) -> Option<String> {
    text.split(',')
        .filter(|e| !e.is_empty())
        .find_map(|expr| range_error(expr, field))
}

/// One `a-b/step` expression of a field.
fn range_error(expr: &str, field: &Field) -> Option<String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let (start, mut end) = if matches!(low_and_high[0], "*" | "?") {
        (field.min, field.max)
    } else {
        let start = match int_or_name(low_and_high[0], field) {
            Ok(n) => n,
            Err(e) => return Some(e),
        };
        let end = match low_and_high.len() {
            1 => start,
            2 => match int_or_name(low_and_high[1], field) {
                Ok(n) => n,
                Err(e) => return Some(e),
            },
            _ => return Some(format!("too many hyphens: {expr}")),
        };
        (start, end)
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = match int(range_and_step[1]) {
                Ok(n) => n,
                Err(e) => return Some(e),
            };
            // `N/step` means `N-max/step`.
            if low_and_high.len() == 1 {
                end = field.max;
            }
            step
        }
        _ => return Some(format!("too many slashes: {expr}")),
    };
    if start < field.min {
        return Some(format!(
            "beginning of range ({start}) below minimum ({}): {expr}",
            field.min
        ));
    }
    if end > field.max {
        return Some(format!(
            "end of range ({end}) above maximum ({}): {expr}",
            field.max
        ));
    }
    if start > end {
        return Some(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Some(format!("step of range should be a positive number: {expr}"));
    }
    None
}

fn int_or_name(text: &str, field: &Field) -> Result<u32, String> {
    let lower = text.to_ascii_lowercase();
    match field.names.iter().position(|n| *n == lower) {
        Some(i) => Ok(field.first_name + i as u32),
        None => int(text),
    }
}

/// `mustParseInt`, with Go's `strconv.Atoi` wording.
fn int(text: &str) -> Result<u32, String> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return Err(format!(
            "failed to parse int from {text}: strconv.Atoi: parsing {text:?}: invalid syntax"
        ));
    }
    match text.parse::<i64>() {
        Ok(n) if n < 0 => Err(format!("negative number ({n}) not allowed: {n}")),
        Ok(n) => u32::try_from(n).map_err(|_| out_of_range(text)),
        Err(_) => Err(out_of_range(text)),
    }
}

fn out_of_range(text: &str) -> String {
    format!("failed to parse int from {text}: strconv.Atoi: parsing {text:?}: value out of range")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules() {
        for ok in [
            "*/5 * * * *",
            "0 9-17 * * MON-FRI",
            "@hourly",
            "@every 1h30m",
            "0 0 1 jan,jul *",
        ] {
            assert_eq!(schedule_error(ok), None, "{ok}");
        }
        assert_eq!(
            schedule_error("61 * * * *").as_deref(),
            Some("end of range (61) above maximum (59): 61")
        );
        assert_eq!(
            schedule_error("* * *").as_deref(),
            Some("expected exactly 5 fields, found 3: [* * *]")
        );
        assert_eq!(
            schedule_error("@sometimes").as_deref(),
            Some("unrecognized descriptor: @sometimes")
        );
        assert_eq!(
            schedule_error("x * * * *").as_deref(),
            Some("failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax")
        );
    }
}
