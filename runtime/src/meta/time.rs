use std::fmt;

use jiff::Timestamp;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use serde_json::{Value, json};

use crate::api_type::ApiType;
use crate::openapi::{Definitions, OpenApi};

/// metav1.Time: a timestamp that travels as RFC 3339 with whole seconds in UTC
/// (`2024-05-01T12:00:00Z`), exactly as Kubernetes writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub Timestamp);

/// metav1.MicroTime: like [`Time`] with six fractional digits
/// (`2024-05-01T12:00:00.123456Z`), used by events and leases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MicroTime(pub Timestamp);

/// A timestamp as Go's `time.Time.String` prints it in UTC, e.g.
/// `2026-03-04 05:06:07.5 +0000 UTC` (validation messages quote times so).
fn go_string(t: Timestamp) -> String {
    t.strftime("%Y-%m-%d %H:%M:%S%.f +0000 UTC").to_string()
}

impl Time {
    /// The time as Go prints it (`2026-03-04 05:06:07 +0000 UTC`).
    pub fn go_string(&self) -> String {
        go_string(self.0)
    }

    /// The current time, truncated to whole seconds as it will be stored.
    pub fn now() -> Time {
        Time(Timestamp::from_second(Timestamp::now().as_second()).unwrap_or(Timestamp::UNIX_EPOCH))
    }
}

impl MicroTime {
    /// The time as Go prints it (`2026-03-04 05:06:07.123456 +0000 UTC`).
    pub fn go_string(&self) -> String {
        go_string(self.0)
    }

    /// The current time, truncated to microseconds.
    pub fn now() -> MicroTime {
        let now = Timestamp::now();
        MicroTime(Timestamp::from_microsecond(now.as_microsecond()).unwrap_or(now))
    }
}

/// Writes `t` as RFC 3339 in UTC, with `micros` fractional digits or
/// none: every object carries several times, so this is written by hand
/// rather than through a format string. Years outside 0..=9999 (which
/// Kubernetes never stores) go through jiff.
fn write_rfc3339(t: Timestamp, micros: bool, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let (mut seconds, mut nanos) = (t.as_second(), t.subsec_nanosecond());
    if nanos < 0 {
        seconds -= 1;
        nanos += 1_000_000_000;
    }
    let (days, of_day) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    if !(0..=9999).contains(&year) {
        let format = if micros {
            "%Y-%m-%dT%H:%M:%S%.6fZ"
        } else {
            "%Y-%m-%dT%H:%M:%SZ"
        };
        return write!(f, "{}", t.strftime(format));
    }
    let mut out = *b"0000-00-00T00:00:00.000000Z";
    let mut put = |at: usize, width: usize, mut value: i64| {
        for i in (at..at + width).rev() {
            out[i] = b'0' + (value % 10) as u8;
            value /= 10;
        }
    };
    put(0, 4, year);
    put(5, 2, month);
    put(8, 2, day);
    put(11, 2, of_day / 3600);
    put(14, 2, of_day / 60 % 60);
    put(17, 2, of_day % 60);
    let text = if micros {
        put(20, 6, i64::from(nanos / 1000));
        &out[..]
    } else {
        out[19] = b'Z';
        &out[..20]
    };
    // Only ASCII digits and separators were written.
    f.write_str(std::str::from_utf8(text).map_err(|_| fmt::Error)?)
}

/// The proleptic Gregorian (year, month, day) of a count of days since
/// 1970-01-01 (Howard Hinnant's civil_from_days).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_rfc3339(self.0, false, f)
    }
}

impl fmt::Display for MicroTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_rfc3339(self.0, true, f)
    }
}

impl Serialize for Time {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl Serialize for MicroTime {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

fn parse_timestamp<'de, D: Deserializer<'de>>(d: D) -> Result<Timestamp, D::Error> {
    let text = String::deserialize(d)?;
    text.parse::<Timestamp>()
        .map_err(|e| serde::de::Error::custom(format!("invalid RFC 3339 time {text:?}: {e}")))
}

impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let ts = parse_timestamp(d)?;
        // Kubernetes keeps whole seconds only.
        Ok(Time(
            Timestamp::from_second(ts.as_second()).map_err(serde::de::Error::custom)?,
        ))
    }
}

impl<'de> Deserialize<'de> for MicroTime {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        parse_timestamp(d).map(MicroTime)
    }
}

impl ApiType for Time {}
impl ApiType for MicroTime {}

// Every version of every kind shares the meta types.
crate::identity_conversions!(Time, MicroTime);

impl OpenApi for Time {
    fn schema(defs: &mut Definitions) -> Value {
        defs.define(
            "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
            |_| json!({"type": "string", "format": "date-time"}),
        )
    }
}

impl OpenApi for MicroTime {
    fn schema(defs: &mut Definitions) -> Value {
        defs.define(
            "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
            |_| json!({"type": "string", "format": "date-time"}),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_as_jiff_formats_them() {
        // Seconds from before 1970 to 9999, fractions of both signs, and
        // the edges of months, leap days and centuries.
        let mut seconds: Vec<i64> = vec![
            0,
            -1,
            951_782_400,     // 2000-02-29
            4_107_542_399,   // 2100-02-28T23:59:59
            -62_135_596_800, // 0001-01-01
            253_402_300_799, // 9999-12-31T23:59:59
            -62_167_219_200, // 0000-01-01
        ];
        let mut x: i64 = 0x2545_f491;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            seconds.push(x.rem_euclid(253_402_300_800 + 62_167_219_200) - 62_167_219_200);
        }
        for (i, s) in seconds.into_iter().enumerate() {
            let nanos: i32 = [0, 999_999_999, 1, 123_456_789][i % 4];
            let Ok(t) = Timestamp::new(s, if s < 0 { -nanos } else { nanos }) else {
                continue;
            };
            assert_eq!(
                Time(t).to_string(),
                t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
                "{t:?}"
            );
            assert_eq!(
                MicroTime(t).to_string(),
                t.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string(),
                "{t:?}"
            );
        }
    }

    #[test]
    fn time_round_trips_as_seconds() {
        let t: Time = serde_json::from_str("\"2024-05-01T12:00:00.987+02:00\"").unwrap();
        assert_eq!(
            serde_json::to_string(&t).unwrap(),
            "\"2024-05-01T10:00:00Z\""
        );
    }

    #[test]
    fn micro_time_has_six_digits() {
        let t: MicroTime = serde_json::from_str("\"2024-05-01T12:00:00.5Z\"").unwrap();
        assert_eq!(
            serde_json::to_string(&t).unwrap(),
            "\"2024-05-01T12:00:00.500000Z\""
        );
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(serde_json::from_str::<Time>("\"yesterday\"").is_err());
    }
}
