//! The canonical text of a resource quantity, as Kubernetes writes every
//! quantity it has parsed: `0.5` becomes `500m`, `1.5Gi` becomes `1536Mi`,
//! `1000m` becomes `1`. The number keeps its family of suffix (binary `Ki`..`Ei`,
//! decimal `n`..`E`, or an `e<N>` exponent) and is written with the largest
//! suffix that leaves an integer; precision below a nano is rounded up, away
//! from zero. Text Go's parser takes as already canonical is kept as sent, even
//! where it is not quite (`+5`, `007`, `1E-3`), and a decimal power beyond `E`
//! loses its suffix (`1000E` is written `1`), as Go writes them.

/// The three ways a quantity's text can scale its number.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Format {
    /// `Ki`, `Mi`, ... (powers of 1024).
    BinarySI,
    /// `n`, `u`, `m`, none, `k`, `M`, ... (powers of 1000).
    DecimalSI,
    /// `e3`, `E-2` (powers of ten).
    DecimalExponent,
}

/// A parsed quantity: `digits * 10^exponent * 1024^binary`, negative or not.
struct Parsed<'a> {
    negative: bool,
    digits: i128,
    exponent: i32,
    binary: u32,
    format: Format,
    /// The integer part without leading zeros (one `0` when it is all zeros).
    whole: &'a str,
    /// The fractional digits.
    fraction: &'a str,
}

/// The canonical text of `text`, or `None` when it is not a quantity or its
/// number is beyond what this computes exactly (then it is left as it is).
pub fn canonical(text: &str) -> Option<String> {
    let parsed = parse(text)?;
    if kept_as_sent(&parsed) {
        return Some(text.to_owned());
    }
    canonical_of(&parsed)
}

/// The text of a quantity in a resource list (`limits`, `capacity`, `hard`):
/// Kubernetes rounds those up to a thousandth (`1u` becomes `1m`, `1.0001`
/// becomes `1001m`). `None` when no rounding is needed (or `text` is not a
/// quantity); [`canonical`] applies then.
pub fn round_up_to_milli(text: &str) -> Option<String> {
    let parsed = parse(text)?;
    if parsed.exponent >= -3 {
        return None;
    }
    let value = parsed
        .digits
        .checked_mul(1024_i128.checked_pow(parsed.binary)?)?;
    let divisor = 10_i128.checked_pow((-3 - parsed.exponent).unsigned_abs())?;
    let rounded = value / divisor + i128::from(value % divisor != 0);
    canonical_of(&Parsed {
        digits: rounded,
        exponent: -3,
        binary: 0,
        ..parsed
    })
}

/// The value of a quantity in billionths (`1Gi` is `1073741824000000000`),
/// rounded up below a billionth, as Go's `Quantity.Cmp` orders them; `None`
/// when `text` is not a quantity or too large to count so finely.
pub fn nano_value(text: &str) -> Option<i128> {
    let parsed = parse(text)?;
    let value = parsed
        .digits
        .checked_mul(1024_i128.checked_pow(parsed.binary)?)?;
    let shift = parsed.exponent + 9;
    let magnitude = if shift >= 0 {
        value.checked_mul(10_i128.checked_pow(shift.unsigned_abs())?)?
    } else {
        let divisor = 10_i128.checked_pow(shift.unsigned_abs())?;
        value / divisor + i128::from(value % divisor != 0)
    };
    Some(if parsed.negative {
        -magnitude
    } else {
        magnitude
    })
}

/// The canonical text of a parsed quantity.
fn canonical_of(parsed: &Parsed<'_>) -> Option<String> {
    if parsed.digits == 0 {
        return Some("0".to_owned());
    }
    let sign = if parsed.negative { "-" } else { "" };
    if parsed.format == Format::BinarySI
        && let Some(text) = canonical_binary(parsed)
    {
        return Some(format!("{sign}{text}"));
    }
    let format = match parsed.format {
        Format::BinarySI => Format::DecimalSI,
        other => other,
    };
    let value = parsed
        .digits
        .checked_mul(1024_i128.checked_pow(parsed.binary)?)?;
    let (mantissa, exponent) = canonical_decimal(value, parsed.exponent)?;
    let suffix = match format {
        Format::DecimalExponent if exponent == 0 => String::new(),
        Format::DecimalExponent => format!("e{exponent}"),
        _ => decimal_suffix(exponent).to_owned(),
    };
    Some(format!("{sign}{mantissa}{suffix}"))
}

/// Whether Go's parser keeps the text as sent: a number small enough for its
/// fast path whose digits already have the canonical shape (for decimal, a
/// power that is a multiple of three, no trailing `000` and no leading zero;
/// for binary, not a multiple of 8 before the suffix).
fn kept_as_sent(parsed: &Parsed<'_>) -> bool {
    let digit_count = parsed.whole.len() + parsed.fraction.len();
    if parsed.format == Format::BinarySI {
        let precision = 14 - digit_count as i64 - 3 * i64::from(parsed.binary);
        let fits = 1024_i128
            .checked_pow(parsed.binary)
            .and_then(|scale| parsed.digits.checked_mul(scale))
            .is_some_and(|v| v <= i128::from(i64::MAX));
        return parsed.fraction.is_empty() && precision >= 0 && fits && parsed.digits & 7 != 0;
    }
    if digit_count > 18 || parsed.exponent < -9 {
        return false;
    }
    let shifted = format!("{}{}", parsed.whole, parsed.fraction);
    parsed.exponent % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0')
}

/// A binary quantity of at least 1024 that is a whole number: the largest
/// power of 1024 that divides it. `None` when it must be written in decimal.
fn canonical_binary(parsed: &Parsed) -> Option<String> {
    let mut value = parsed
        .digits
        .checked_mul(1024_i128.checked_pow(parsed.binary)?)?;
    let mut exponent = parsed.exponent;
    while exponent > 0 {
        value = value.checked_mul(10)?;
        exponent -= 1;
    }
    while exponent < 0 {
        if value % 10 != 0 {
            return None;
        }
        value /= 10;
        exponent += 1;
    }
    if value < 1024 {
        return None;
    }
    let mut power = 0;
    while value % 1024 == 0 && power < 6 {
        value /= 1024;
        power += 1;
    }
    let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][power];
    Some(format!("{value}{suffix}"))
}

/// `value * 10^exponent` as a mantissa and an exponent that is a multiple of
/// three, with as few zeros as possible; rounded up to nanos first.
fn canonical_decimal(mut value: i128, mut exponent: i32) -> Option<(i128, i32)> {
    if exponent < -9 {
        let divisor = 10_i128.checked_pow((-9 - exponent).unsigned_abs())?;
        value = value / divisor + i128::from(value % divisor != 0);
        exponent = -9;
    }
    while value % 10 == 0 {
        value /= 10;
        exponent += 1;
    }
    match exponent.rem_euclid(3) {
        1 => {
            value = value.checked_mul(10)?;
            exponent -= 1;
        }
        2 => {
            value = value.checked_mul(100)?;
            exponent -= 2;
        }
        _ => {}
    }
    Some((value, exponent))
}

/// The decimal SI suffix of a power of ten that is a multiple of three; none
/// beyond the table (Go's writer drops it there).
fn decimal_suffix(exponent: i32) -> &'static str {
    match exponent {
        -9 => "n",
        -6 => "u",
        -3 => "m",
        0 => "",
        3 => "k",
        6 => "M",
        9 => "G",
        12 => "T",
        15 => "P",
        18 => "E",
        _ => "",
    }
}

/// Reads `[+-]digits[.digits]suffix`.
fn parse(text: &str) -> Option<Parsed<'_>> {
    let (negative, rest) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let number_len = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(number_len);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.len() + fraction.len() == 0 || fraction.contains('.') {
        return None;
    }
    let mut digits: i128 = 0;
    for c in whole.bytes().chain(fraction.bytes()) {
        digits = digits.checked_mul(10)?.checked_add(i128::from(c - b'0'))?;
    }
    let fraction_len = i32::try_from(fraction.len()).ok()?;
    let whole = match whole.trim_start_matches('0') {
        "" if !whole.is_empty() => "0",
        trimmed => trimmed,
    };
    let (format, exponent, binary) = match suffix {
        "Ki" => (Format::BinarySI, 0, 1),
        "Mi" => (Format::BinarySI, 0, 2),
        "Gi" => (Format::BinarySI, 0, 3),
        "Ti" => (Format::BinarySI, 0, 4),
        "Pi" => (Format::BinarySI, 0, 5),
        "Ei" => (Format::BinarySI, 0, 6),
        "" => (Format::DecimalSI, 0, 0),
        "n" => (Format::DecimalSI, -9, 0),
        "u" => (Format::DecimalSI, -6, 0),
        "m" => (Format::DecimalSI, -3, 0),
        "k" => (Format::DecimalSI, 3, 0),
        "M" => (Format::DecimalSI, 6, 0),
        "G" => (Format::DecimalSI, 9, 0),
        "T" => (Format::DecimalSI, 12, 0),
        "P" => (Format::DecimalSI, 15, 0),
        "E" => (Format::DecimalSI, 18, 0),
        _ => {
            let power = suffix.strip_prefix(['e', 'E'])?;
            let digits_only = power.strip_prefix(['+', '-']).unwrap_or(power);
            if digits_only.is_empty() || !digits_only.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let power: i32 = power.parse().ok()?;
            if !(-1000..=1000).contains(&power) {
                return None;
            }
            (Format::DecimalExponent, power, 0)
        }
    };
    Some(Parsed {
        negative,
        digits,
        exponent: exponent - fraction_len,
        binary,
        format,
        whole,
        fraction,
    })
}

#[cfg(test)]
mod tests {
    use super::{canonical, nano_value};

    #[test]
    fn values_count_billionths() {
        assert_eq!(nano_value("1Gi"), Some(1_073_741_824_000_000_000));
        assert_eq!(nano_value("100m"), Some(100_000_000));
        assert_eq!(nano_value("1.5"), Some(1_500_000_000));
        assert_eq!(nano_value("-2k"), Some(-2_000_000_000_000));
        assert_eq!(nano_value("1e-10"), Some(1));
        assert_eq!(nano_value("x"), None);
        assert!(nano_value("2Gi") > nano_value("2G"));
    }

    #[test]
    fn decimal_numbers_take_the_largest_whole_suffix() {
        for (text, want) in [
            ("0.5", "500m"),
            ("0.1", "100m"),
            ("1000m", "1"),
            ("1500m", "1500m"),
            ("1.5", "1500m"),
            ("100000", "100k"),
            ("12345", "12345"),
            ("2000M", "2G"),
            ("1u", "1u"),
            ("0.0000000001", "1n"),
            ("-0.25", "-250m"),
            ("0", "0"),
            ("0Gi", "0"),
            ("1e3", "1e3"),
            ("1.5e3", "1500"),
            ("1E", "1E"),
            ("0.100", "100m"),
            ("00.5", "500m"),
            ("000", "0"),
            ("0.5m", "500u"),
            ("1.10", "1100m"),
            ("1.5e-1", "150e-3"),
            ("12e2", "1200"),
            ("1200e-2", "12"),
            (".5", "500m"),
            ("0.5e1", "5"),
            ("1000000000000000000", "1E"),
            ("1000E", "1"),
        ] {
            assert_eq!(canonical(text).as_deref(), Some(want), "{text}");
        }
    }

    #[test]
    fn binary_numbers_stay_binary_when_whole_and_at_least_1024() {
        for (text, want) in [
            ("1.5Gi", "1536Mi"),
            ("1024Mi", "1Gi"),
            ("1Ki", "1Ki"),
            ("1000Ki", "1000Ki"),
            ("1.5Ki", "1536"),
            ("0.5Ki", "512"),
            ("0.3Ki", "307200m"),
            ("128Mi", "128Mi"),
            ("3072Ki", "3Mi"),
            ("8Ki", "8Ki"),
        ] {
            assert_eq!(canonical(text).as_deref(), Some(want), "{text}");
        }
    }

    #[test]
    fn text_go_takes_as_canonical_is_kept_as_sent() {
        for text in [
            "+5",
            "007",
            "1E-3",
            "10e0",
            "5.",
            "5.e3",
            "+1Ki",
            "7Ki",
            "1500m",
            "12345",
            "123456789012345678",
        ] {
            assert_eq!(canonical(text).as_deref(), Some(text), "{text}");
        }
    }

    #[test]
    fn resource_lists_round_up_to_thousandths() {
        for (text, want) in [
            ("1u", Some("1m")),
            ("1500u", Some("2m")),
            ("0.0001", Some("1m")),
            ("1.0001", Some("1001m")),
            ("1000u", Some("1m")),
            ("1n", Some("1m")),
            ("1e-4", Some("1e-3")),
            ("+1u", Some("1m")),
            ("-1u", Some("-1m")),
            ("1.0000Ki", Some("1Ki")),
            ("250m", None),
            ("0.5", None),
            ("2Gi", None),
        ] {
            assert_eq!(super::round_up_to_milli(text).as_deref(), want, "{text}");
        }
    }

    #[test]
    fn any_short_text_and_huge_numbers_are_answered_without_panic() {
        let alphabet: Vec<char> = "0123456789.+-eEKMGTPimnuk".chars().collect();
        let mut texts = vec![String::new()];
        for _ in 0..3 {
            let longer: Vec<String> = texts
                .iter()
                .flat_map(|t| alphabet.iter().map(move |c| format!("{t}{c}")))
                .collect();
            texts.extend(longer);
        }
        texts.extend([
            "9".repeat(60),
            format!("0.{}1", "0".repeat(60)),
            format!("{}Ei", "9".repeat(30)),
            "1e1000".to_owned(),
            "1e-1000".to_owned(),
            "8Ei".to_owned(),
        ]);
        for text in &texts {
            let _ = super::canonical(text);
            let _ = super::round_up_to_milli(text);
        }
    }

    #[test]
    fn text_that_is_not_a_quantity_is_left_alone() {
        for text in ["", "abc", "1.2.3", "5Qi", "1e", "--1", "."] {
            assert_eq!(canonical(text), None, "{text}");
        }
    }
}
