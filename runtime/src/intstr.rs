//! Scalar wire types of apimachinery: IntOrString and Quantity.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::api_type::ApiType;
use crate::validation::rules::Presence;

/// intstr.IntOrString: a JSON number or string (`8080` or `"http"`, `"25%"`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IntOrString {
    /// A number.
    Int(i32),
    /// A string.
    String(String),
}

impl Default for IntOrString {
    fn default() -> Self {
        IntOrString::Int(0)
    }
}

impl Serialize for IntOrString {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            IntOrString::Int(i) => s.serialize_i32(*i),
            IntOrString::String(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for IntOrString {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(i32),
            String(String),
        }
        match Raw::deserialize(d) {
            Ok(Raw::Int(i)) => Ok(IntOrString::Int(i)),
            Ok(Raw::String(s)) => Ok(IntOrString::String(s)),
            Err(_) => Err(serde::de::Error::custom(
                "expected an integer (32 bits) or a string",
            )),
        }
    }
}

impl fmt::Display for IntOrString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntOrString::Int(i) => write!(f, "{i}"),
            IntOrString::String(s) => f.write_str(s),
        }
    }
}

/// resource.Quantity, in the text form the client sent (`500m`, `1Gi`) until
/// defaults are applied, which rewrite it in Kubernetes' canonical form (`0.5`
/// to `500m`, see [`crate::quantity`]); a number sent as JSON number is
/// accepted as its decimal text. Text that is no quantity fails to decode, as
/// Go's `Quantity.UnmarshalJSON` fails (kube-apiserver answers 400, not 422).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Quantity(pub String);

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) => s.trim().to_owned(),
            serde_json::Value::Number(n) => n.to_string(),
            // Go's Quantity reads null as zero.
            serde_json::Value::Null => "0".to_owned(),
            _ => String::new(),
        };
        if !is_quantity(&text) {
            return Err(serde::de::Error::custom(
                "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            ));
        }
        Ok(Quantity(text))
    }
}

impl ApiType for IntOrString {}

/// A port or a quantity is always present (for `required` on fields of its
/// type), as a number is.
impl Presence for IntOrString {
    fn is_present(&self) -> bool {
        true
    }
}

impl Presence for Quantity {
    fn is_present(&self) -> bool {
        true
    }
}

impl ApiType for Quantity {
    /// Kubernetes writes every quantity it parsed in canonical form; text that
    /// is not a quantity is left for validation to report.
    fn apply_defaults(&mut self) {
        if let Some(canonical) = crate::quantity::canonical(&self.0) {
            self.0 = canonical;
        }
    }

    fn validate(
        &self,
        path: &crate::validation::FieldPath,
        errs: &mut crate::validation::FieldErrors,
    ) {
        if !is_quantity(&self.0) {
            errs.invalid(
                path.clone(),
                &self.0,
                "must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            );
        }
    }
}

/// Whether `s` has the shape of a Kubernetes quantity: a signed decimal number
/// followed by an optional binary-SI, decimal-SI or exponent suffix.
fn is_quantity(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let number_len = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(number_len);
    if number.is_empty() || number == "." || number.matches('.').count() > 1 {
        return false;
    }
    match suffix {
        "" | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" | "n" | "u" | "m" | "k" | "M" | "G" | "T"
        | "P" | "E" => true,
        exp => {
            let Some(digits) = exp.strip_prefix(['e', 'E']) else {
                return false;
            };
            let digits = digits.strip_prefix(['+', '-']).unwrap_or(digits);
            !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_or_string_keeps_its_json_type() {
        let v: Vec<IntOrString> = serde_json::from_str(r#"[80, "http"]"#).unwrap();
        assert_eq!(
            v,
            vec![IntOrString::Int(80), IntOrString::String("http".into())]
        );
        assert_eq!(serde_json::to_string(&v).unwrap(), r#"[80,"http"]"#);
        assert!(serde_json::from_str::<IntOrString>("true").is_err());
    }

    #[test]
    fn quantity_shapes() {
        for ok in ["1", "500m", "1.5Gi", "2e3", "+1k", "0.1"] {
            assert!(is_quantity(ok), "{ok}");
        }
        for bad in ["", "abc", "1Xi", "1.2.3", "e3", "1e"] {
            assert!(!is_quantity(bad), "{bad}");
        }
    }
}
