use std::fmt;

use jiff::Timestamp;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::api_type::ApiType;

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

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.strftime("%Y-%m-%dT%H:%M:%SZ"))
    }
}

impl fmt::Display for MicroTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.strftime("%Y-%m-%dT%H:%M:%S%.6fZ"))
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

#[cfg(test)]
mod tests {
    use super::*;

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
