//! The Kubernetes CEL library functions the `cel` crate does not have:
//! the lists library (`isSorted`, `sum`, `min`, `max`, `indexOf`,
//! `lastIndexOf` on lists), the regex library (`find`, `findAll`) and the
//! quantity library (`isQuantity`, `quantity`, comparisons, arithmetic,
//! conversions). The URL, IP/CIDR and named-format libraries are not here
//! yet: a rule calling them fails to compile.

use std::cmp::Ordering;
use std::sync::Arc;

use cel::extractors::This;
use cel::objects::Opaque;
use cel::{Context, ExecutionError, Value};

type Result<T> = std::result::Result<T, ExecutionError>;

/// Registers the library on `ctx`.
pub fn install(ctx: &mut Context<'_, '_>) {
    // Names are fixed and distinct: adding them to a fresh context cannot
    // conflict.
    let _ = ctx.add_function("isSorted", is_sorted);
    let _ = ctx.add_function("sum", sum);
    let _ = ctx.add_function("min", min);
    let _ = ctx.add_function("max", max);
    let _ = ctx.add_function("indexOf", index_of);
    let _ = ctx.add_function("lastIndexOf", last_index_of);
    let _ = ctx.add_function("find", find);
    let _ = ctx.add_function("findAll", find_all);
    let _ = ctx.add_function("isQuantity", is_quantity);
    let _ = ctx.add_function("quantity", quantity);
    let _ = ctx.add_function("isLessThan", is_less_than);
    let _ = ctx.add_function("isGreaterThan", is_greater_than);
    let _ = ctx.add_function("compareTo", compare_to);
    let _ = ctx.add_function("add", add);
    let _ = ctx.add_function("sub", sub);
    let _ = ctx.add_function("asInteger", as_integer);
    let _ = ctx.add_function("asApproximateFloat", as_approximate_float);
    let _ = ctx.add_function("isInteger", is_integer);
    let _ = ctx.add_function("sign", sign);
}

fn list(value: &Value, function: &str) -> Result<Arc<Vec<Value>>> {
    match value {
        Value::List(items) => Ok(items.clone()),
        other => Err(no_overload(function, other)),
    }
}

fn no_overload(function: &str, value: &Value) -> ExecutionError {
    ExecutionError::no_such_member_overload(function, vec![format!("{:?}", value.type_of())])
}

fn compare(a: &Value, b: &Value) -> Result<Ordering> {
    a.partial_cmp(b)
        .ok_or_else(|| ExecutionError::ValuesNotComparable(a.clone(), b.clone()))
}

fn is_sorted(This(this): This<Value>) -> Result<bool> {
    let items = list(&this, "isSorted")?;
    for pair in items.windows(2) {
        if compare(&pair[0], &pair[1])? == Ordering::Greater {
            return Ok(false);
        }
    }
    Ok(true)
}

fn sum(This(this): This<Value>) -> Result<Value> {
    let items = list(&this, "sum")?;
    let mut total = match items.first() {
        None | Some(Value::Int(_)) => Value::Int(0),
        Some(Value::UInt(_)) => Value::UInt(0),
        Some(Value::Float(_)) => Value::Float(0.0),
        Some(Value::Duration(_)) => Value::Duration(chrono::Duration::zero()),
        Some(other) => return Err(no_overload("sum", other)),
    };
    for item in items.iter() {
        total = match (&total, item) {
            (Value::Int(a), Value::Int(b)) => Value::Int(
                a.checked_add(*b)
                    .ok_or_else(|| ExecutionError::Overflow("add", total.clone(), item.clone()))?,
            ),
            (Value::UInt(a), Value::UInt(b)) => Value::UInt(
                a.checked_add(*b)
                    .ok_or_else(|| ExecutionError::Overflow("add", total.clone(), item.clone()))?,
            ),
            (Value::Float(a), Value::Float(b)) => Value::Float(a + b),
            (Value::Duration(a), Value::Duration(b)) => Value::Duration(*a + *b),
            _ => return Err(no_overload("sum", item)),
        };
    }
    Ok(total)
}

fn extreme(this: &Value, function: &str, keep: Ordering) -> Result<Value> {
    let items = list(this, function)?;
    let Some(first) = items.first() else {
        return Err(ExecutionError::function_error(
            function,
            format!("{function}(list) called on an empty list"),
        ));
    };
    let mut best = first;
    for item in items.iter().skip(1) {
        if compare(item, best)? == keep {
            best = item;
        }
    }
    Ok(best.clone())
}

fn min(This(this): This<Value>) -> Result<Value> {
    extreme(&this, "min", Ordering::Less)
}

fn max(This(this): This<Value>) -> Result<Value> {
    extreme(&this, "max", Ordering::Greater)
}

fn index_of(This(this): This<Value>, needle: Value) -> Result<i64> {
    let items = list(&this, "indexOf")?;
    Ok(items
        .iter()
        .position(|item| *item == needle)
        .map_or(-1, |i| i as i64))
}

fn last_index_of(This(this): This<Value>, needle: Value) -> Result<i64> {
    let items = list(&this, "lastIndexOf")?;
    Ok(items
        .iter()
        .rposition(|item| *item == needle)
        .map_or(-1, |i| i as i64))
}

fn text<'a>(value: &'a Value, function: &str) -> Result<&'a str> {
    match value {
        Value::String(s) => Ok(s.as_str()),
        other => Err(no_overload(function, other)),
    }
}

fn regex(pattern: &Value, function: &str) -> Result<regex::Regex> {
    let pattern = text(pattern, function)?;
    regex::Regex::new(pattern)
        .map_err(|e| ExecutionError::function_error(function, format!("error parsing regexp: {e}")))
}

fn find(This(this): This<Value>, pattern: Value) -> Result<Value> {
    let haystack = text(&this, "find")?;
    let re = regex(&pattern, "find")?;
    Ok(Value::String(Arc::new(
        re.find(haystack).map_or("", |m| m.as_str()).to_owned(),
    )))
}

fn find_all(This(this): This<Value>, pattern: Value) -> Result<Value> {
    let haystack = text(&this, "findAll")?;
    let re = regex(&pattern, "findAll")?;
    Ok(Value::List(Arc::new(
        re.find_iter(haystack)
            .map(|m| Value::String(Arc::new(m.as_str().to_owned())))
            .collect(),
    )))
}

/// A `resource.Quantity`, by its value in nano-units.
#[derive(Debug, PartialEq, Eq)]
struct Quantity {
    nanos: i128,
}

impl Opaque for Quantity {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Quantity"
    }
}

fn parse_quantity(text: &str) -> Option<Quantity> {
    kapi_runtime::quantity::nano_value(text).map(|nanos| Quantity { nanos })
}

fn as_quantity(value: &Value, function: &str) -> Result<i128> {
    match value {
        Value::Opaque(o) => o
            .downcast_ref::<Quantity>()
            .map(|q| q.nanos)
            .ok_or_else(|| no_overload(function, value)),
        other => Err(no_overload(function, other)),
    }
}

fn quantity_value(nanos: i128) -> Value {
    Value::Opaque(Arc::new(Quantity { nanos }))
}

fn is_quantity(value: Value) -> Result<bool> {
    Ok(parse_quantity(text(&value, "isQuantity")?).is_some())
}

fn quantity(value: Value) -> Result<Value> {
    let s = text(&value, "quantity")?;
    parse_quantity(s)
        .map(|q| quantity_value(q.nanos))
        .ok_or_else(|| {
            ExecutionError::function_error("quantity", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
        })
}

/// A quantity or an integer operand, in nano-units.
fn operand(value: &Value, function: &str) -> Result<i128> {
    match value {
        Value::Int(i) => Ok(i128::from(*i) * 1_000_000_000),
        other => as_quantity(other, function),
    }
}

fn is_less_than(This(this): This<Value>, other: Value) -> Result<bool> {
    Ok(as_quantity(&this, "isLessThan")? < as_quantity(&other, "isLessThan")?)
}

fn is_greater_than(This(this): This<Value>, other: Value) -> Result<bool> {
    Ok(as_quantity(&this, "isGreaterThan")? > as_quantity(&other, "isGreaterThan")?)
}

fn compare_to(This(this): This<Value>, other: Value) -> Result<i64> {
    Ok(
        match as_quantity(&this, "compareTo")?.cmp(&as_quantity(&other, "compareTo")?) {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        },
    )
}

fn add(This(this): This<Value>, other: Value) -> Result<Value> {
    Ok(quantity_value(
        as_quantity(&this, "add")? + operand(&other, "add")?,
    ))
}

fn sub(This(this): This<Value>, other: Value) -> Result<Value> {
    Ok(quantity_value(
        as_quantity(&this, "sub")? - operand(&other, "sub")?,
    ))
}

fn as_integer(This(this): This<Value>) -> Result<i64> {
    let nanos = as_quantity(&this, "asInteger")?;
    if nanos % 1_000_000_000 != 0 {
        return Err(ExecutionError::function_error(
            "asInteger",
            "cannot convert value to integer",
        ));
    }
    i64::try_from(nanos / 1_000_000_000)
        .map_err(|_| ExecutionError::function_error("asInteger", "cannot convert value to integer"))
}

fn as_approximate_float(This(this): This<Value>) -> Result<f64> {
    Ok(as_quantity(&this, "asApproximateFloat")? as f64 / 1e9)
}

fn is_integer(This(this): This<Value>) -> Result<bool> {
    let nanos = as_quantity(&this, "isInteger")?;
    Ok(nanos % 1_000_000_000 == 0 && i64::try_from(nanos / 1_000_000_000).is_ok())
}

fn sign(This(this): This<Value>) -> Result<i64> {
    Ok(as_quantity(&this, "sign")?.signum() as i64)
}
