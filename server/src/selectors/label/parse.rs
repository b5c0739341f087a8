//! The lexer and parser of the text form (upstream `Lexer` and `Parser`).

use std::collections::BTreeSet;
use std::iter::Peekable;

use super::validate::{field_error, key_errors};
use super::{Operator, Requirement};

pub(super) fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r' | b'\n')
}

pub(super) fn is_special(byte: u8) -> bool {
    matches!(byte, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// A token is a symbol (`!`, `!=`, `=`, `==`, `>`, `<`, `(`, `)`, `,`) or an
/// identifier; `in` and `notin` are identifiers except in operator position, so
/// `in in (in)` is a valid selector, as upstream.
pub(super) fn is_identifier(token: &str) -> bool {
    token.bytes().next().is_some_and(|byte| !is_special(byte))
}

pub(super) fn starts_requirement(token: &str) -> bool {
    token == "!" || is_identifier(token)
}

/// Yields tokens as slices of the text. It works on bytes like upstream; every
/// delimiter is ASCII, so the slices fall on character boundaries.
pub(super) struct Lexer<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Iterator for Lexer<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let bytes = self.text.as_bytes();
        let mut pos = self.pos;
        while bytes.get(pos).copied().is_some_and(is_whitespace) {
            pos += 1;
        }
        self.pos = pos;
        let start = pos;
        match *bytes.get(pos)? {
            // Upstream's reader reports the end of input as NUL, so a NUL ends the selector...
            0 => return None,
            b if is_special(b) => {
                // The only two-character symbols are `!=` and `==`.
                let pair = matches!(bytes.get(pos..pos + 2), Some(b"!=" | b"=="));
                pos += if pair { 2 } else { 1 };
            }
            _ => {
                let in_identifier = |&b: &u8| b != 0 && !is_special(b) && !is_whitespace(b);
                while bytes.get(pos).is_some_and(in_identifier) {
                    pos += 1;
                }
            }
        }
        // ...and a NUL right after a token is consumed with it.
        self.pos = pos + usize::from(bytes.get(pos) == Some(&0));
        self.text.get(start..pos)
    }
}

/// Recursive descent over the tokens; `""` stands for the end of input.
pub(super) struct Parser<'a> {
    tokens: Peekable<Lexer<'a>>,
}

impl<'a> Parser<'a> {
    /// A parser over `text`.
    pub(super) fn new(text: &'a str) -> Parser<'a> {
        Parser {
            tokens: Lexer { text, pos: 0 }.peekable(),
        }
    }

    fn peek(&mut self) -> &'a str {
        self.tokens.peek().copied().unwrap_or("")
    }

    fn next(&mut self) -> &'a str {
        self.tokens.next().unwrap_or("")
    }

    pub(super) fn parse_requirements(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        loop {
            match self.peek() {
                "" => return Ok(requirements),
                token if !starts_requirement(token) => {
                    return Err(format!(
                        "found '{token}', expected: !, identifier, or 'end of string'"
                    ));
                }
                _ => {}
            }
            let requirement = self.parse_requirement();
            requirements
                .push(requirement.map_err(|e| format!("unable to parse requirement: {e}"))?);
            match self.next() {
                "" => return Ok(requirements),
                "," if starts_requirement(self.peek()) => {}
                "," => {
                    return Err(format!(
                        "found '{}', expected: identifier after ','",
                        self.peek()
                    ));
                }
                token => return Err(format!("found '{token}', expected: ',' or 'end of string'")),
            }
        }
    }

    /// `[!] KEY [operator values]`. After `!KEY` nothing may follow, so the caller
    /// rejects `!a=b` at the `=`, as upstream.
    fn parse_requirement(&mut self) -> Result<Requirement, String> {
        let negated = self.peek() == "!";
        if negated {
            self.next();
        }
        let key = self.next();
        if !is_identifier(key) {
            return Err(format!("found '{key}', expected: identifier"));
        }
        // Upstream checks the key here against a nil field path, hence "<nil>".
        if let Some(error) = field_error("<nil>", key, &key_errors(key)) {
            return Err(error);
        }
        let operator = match self.peek() {
            _ if negated => Operator::DoesNotExist,
            "" | "," => Operator::Exists,
            _ => Operator::from_token(self.next())?,
        };
        let values = match operator {
            Operator::Exists | Operator::DoesNotExist => BTreeSet::new(),
            Operator::In | Operator::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        Requirement::new(key, operator, values.into_iter().collect())
    }

    /// `( VALUES )` as a set; `()` is the set holding only the empty value.
    fn parse_values(&mut self) -> Result<BTreeSet<String>, String> {
        let token = self.next();
        if token != "(" {
            return Err(format!("found '{token}' expected: '('"));
        }
        match self.peek() {
            ")" => {
                self.next();
                Ok(BTreeSet::from([String::new()]))
            }
            token if token == "," || is_identifier(token) => self.parse_value_list(),
            token => Err(format!("found '{token}', expected: ',', ')' or identifier")),
        }
    }

    /// Comma-separated values through the closing `)`. A value left out next to a
    /// comma is the empty value (`(a,)`, `(,a)`, `(a,,b)`), as upstream.
    fn parse_value_list(&mut self) -> Result<BTreeSet<String>, String> {
        let mut values = BTreeSet::new();
        loop {
            match self.next() {
                "," => {
                    let after = self.peek();
                    if values.is_empty() || after == ")" || after == "," {
                        values.insert(String::new());
                    }
                    if after == ")" {
                        break;
                    }
                }
                value if is_identifier(value) => {
                    values.insert(value.to_string());
                    match self.peek() {
                        "," => {}
                        ")" => break,
                        token => return Err(format!("found '{token}', expected: ',' or ')'")),
                    }
                }
                token => return Err(format!("found '{token}', expected: ',', or identifier")),
            }
        }
        self.next(); // the ')' seen above
        Ok(values)
    }

    /// The value after `=`, `==`, `!=`, `>` or `<`; it may be empty (`a=`, `a=,b`).
    fn parse_exact_value(&mut self) -> Result<BTreeSet<String>, String> {
        match self.peek() {
            "" | "," => Ok(BTreeSet::from([String::new()])),
            value if is_identifier(value) => {
                self.next();
                Ok(BTreeSet::from([value.to_string()]))
            }
            token => Err(format!("found '{token}', expected: identifier")),
        }
    }
}
