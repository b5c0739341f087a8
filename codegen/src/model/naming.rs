//! Kubernetes naming conventions used for defaults.

/// `containerPort` from `container_port`, as serde's `camelCase` does.
pub fn camel_case(snake: &str) -> String {
    let snake = snake.strip_prefix("r#").unwrap_or(snake);
    let mut out = String::with_capacity(snake.len());
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// The plural resource name Kubernetes derives from a lower-cased kind.
pub fn pluralize(singular: &str) -> String {
    if let Some(stem) = singular.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'i', 'o', 'u'])
    {
        return format!("{stem}ies");
    }
    if singular.ends_with('s')
        || singular.ends_with('x')
        || singular.ends_with("ch")
        || singular.ends_with("sh")
    {
        return format!("{singular}es");
    }
    format!("{singular}s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(camel_case("container_port"), "containerPort");
        assert_eq!(camel_case("r#type"), "type");
        assert_eq!(pluralize("policy"), "policies");
        assert_eq!(pluralize("gateway"), "gateways");
        assert_eq!(pluralize("ingress"), "ingresses");
        assert_eq!(pluralize("widget"), "widgets");
    }
}
