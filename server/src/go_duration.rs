//! Go's `time.ParseDuration`, for the `timeout` query parameter: a signed
//! sequence of decimal numbers, each with an optional fraction and a unit
//! (`300ms`, `1.5h`, `2h45m`); units `ns`, `us` (or `µs`, `μs`), `ms`, `s`, `m`,
//! `h`. Errors are Go's texts, which kube-apiserver passes on to the client.

use std::time::Duration;

use crate::api_error::{ApiError, ApiResult};

/// The `timeout` query parameter of any request: `None` when absent or empty
/// (zero or negative reads as zero: the server's own bound), a 400 in
/// upstream's words when it is no Go duration.
pub fn request_timeout(value: Option<&str>) -> ApiResult<Option<Duration>> {
    let Some(text) = value.filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let nanos = parse(text).map_err(|e| {
        ApiError::bad_request(format!(
            "invalid timeout specified in the request URL - {e}"
        ))
    })?;
    Ok(Some(Duration::from_nanos(
        u64::try_from(nanos).unwrap_or(0),
    )))
}

/// A positive duration flag (`--event-ttl=1h0m0s`), read as Go's
/// `time.ParseDuration` reads it.
pub fn positive_flag(text: &str) -> Result<Duration, String> {
    let nanos = parse(text)?;
    if nanos <= 0 {
        return Err(format!("{text:?} is not a positive duration"));
    }
    Ok(Duration::from_nanos(
        u64::try_from(nanos).unwrap_or(u64::MAX),
    ))
}

/// Nanoseconds of a duration, or Go's error text.
pub fn parse(text: &str) -> Result<i128, String> {
    let invalid = || format!("time: invalid duration {text:?}");
    let (negative, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let whole_end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (whole, after) = rest.split_at(whole_end);
        let (fraction, after) = match after.strip_prefix('.') {
            Some(after) => {
                let end = after
                    .find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(after.len());
                after.split_at(end)
            }
            None => ("", after),
        };
        if whole.is_empty() && fraction.is_empty() {
            return Err(invalid());
        }
        let unit_end = after
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_end);
        if unit.is_empty() {
            return Err(format!("time: missing unit in duration {text:?}"));
        }
        let scale: i128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return Err(format!("time: unknown unit {unit:?} in duration {text:?}")),
        };
        let whole: i128 = if whole.is_empty() {
            0
        } else {
            whole.parse().map_err(|_| invalid())?
        };
        let mut value = whole.checked_mul(scale).ok_or_else(invalid)?;
        // Digits past the 18th cannot change a nanosecond count (Go's
        // leadingFraction stops there too), and keep the arithmetic bounded.
        let mut divisor: i128 = 1;
        let mut fraction_value: i128 = 0;
        for digit in fraction.bytes().take(18) {
            fraction_value = fraction_value * 10 + i128::from(digit - b'0');
            divisor *= 10;
        }
        // As Go: the fraction times the unit, in floating point.
        value += (fraction_value as f64 * (scale as f64 / divisor as f64)) as i128;
        total = total.checked_add(value).ok_or_else(invalid)?;
        // Go allows one more nanosecond below zero (an int64's range).
        let limit = i128::from(i64::MAX) + i128::from(negative);
        if total > limit {
            return Err(invalid());
        }
        rest = after;
    }
    Ok(if negative { -total } else { total })
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn durations_as_go_reads_them() {
        assert_eq!(parse("0"), Ok(0));
        assert_eq!(parse("0s"), Ok(0));
        assert_eq!(parse("1s"), Ok(1_000_000_000));
        assert_eq!(parse("300ms"), Ok(300_000_000));
        assert_eq!(parse("1.5h"), Ok(5_400_000_000_000));
        assert_eq!(parse("2h45m"), Ok(9_900_000_000_000));
        assert_eq!(parse("-1s"), Ok(-1_000_000_000));
        assert_eq!(parse(".5s"), Ok(500_000_000));
        assert_eq!(parse("1µs"), Ok(1_000));
    }

    #[test]
    fn errors_in_go_words() {
        assert_eq!(
            parse("invalid"),
            Err(r#"time: invalid duration "invalid""#.into())
        );
        assert_eq!(
            parse("1"),
            Err(r#"time: missing unit in duration "1""#.into())
        );
        assert_eq!(
            parse("1x"),
            Err(r#"time: unknown unit "x" in duration "1x""#.into())
        );
        assert_eq!(parse(""), Err(r#"time: invalid duration """#.into()));
        assert_eq!(parse("-"), Err(r#"time: invalid duration "-""#.into()));
        assert_eq!(parse("."), Err(r#"time: invalid duration ".""#.into()));
        assert!(parse("99999999999999h").is_err());
        assert_eq!(
            parse("-9223372036854775808ns"),
            Ok(-9_223_372_036_854_775_808)
        );
        assert!(parse("9223372036854775808ns").is_err());
    }

    #[test]
    fn long_fractions_do_not_overflow() {
        assert_eq!(
            parse("1.99999999999999999999999999h"),
            Ok(7_200_000_000_000)
        );
        assert_eq!(parse("0.000000000000000000000000000001s"), Ok(0));
    }
}
