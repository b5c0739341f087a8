//! Generated names: what follows a `generateName` prefix, a projected
//! volume's name.

/// Five random characters from the alphabet Kubernetes' name generator uses
/// (no vowels, no look-alikes): the end of generated names.
pub fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let random = uuid::Uuid::new_v4();
    random.as_bytes()[..5]
        .iter()
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect()
}
