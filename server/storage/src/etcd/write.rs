//! Writes as etcd transactions, as k8s.io/apiserver's etcd3 store does them:
//! a create compares the key's create revision with 0, an update or delete its
//! mod revision with the expected one; the else branch reads the key, so that a
//! failed comparison tells "gone" (NotFound) from "changed" (Conflict) without
//! another round trip.

use bytes::Bytes;
use etcd_client::{Compare, CompareOp, DeleteOptions, PutOptions, Txn, TxnOp, TxnOpResponse};

use super::EtcdStore;
use super::call::{etcd_revision, header_revision, key_value, revision};
use crate::{KeyValue, StorageError};

/// Values up to this size are compared inside the update transaction (so that
/// an unchanged value writes nothing in one round trip). Larger ones are compared
/// after a read instead: sending them twice could exceed etcd's request size
/// limit (1.5 MiB by default), which a single copy of the value stays within.
const INLINE_COMPARE_LIMIT: usize = 64 * 1024;

pub(super) async fn create(
    store: &EtcdStore,
    key: &str,
    value: Bytes,
    lease: Option<i64>,
) -> Result<KeyValue, StorageError> {
    let etcd_key = store.keys.to_etcd(key);
    let txn = Txn::new()
        .when([Compare::create_revision(
            etcd_key.as_str(),
            CompareOp::Equal,
            0,
        )])
        .and_then([TxnOp::put(
            etcd_key,
            value.to_vec(),
            lease.map(|id| PutOptions::new().with_lease(id)),
        )]);
    let response = store.txn(txn).await?;
    if !response.succeeded() {
        return Err(StorageError::AlreadyExists(key.to_owned()));
    }
    let revision = header_revision(response.header())?;
    Ok(KeyValue {
        key: key.to_owned(),
        value,
        create_revision: revision,
        mod_revision: revision,
    })
}

pub(super) async fn update(
    store: &EtcdStore,
    key: &str,
    value: Bytes,
    expected: u64,
    lease: Option<i64>,
) -> Result<KeyValue, StorageError> {
    let etcd_key = store.keys.to_etcd(key);
    let mut when = vec![
        Compare::mod_revision(etcd_key.as_str(), CompareOp::Equal, etcd_revision(expected)),
        // An absent key has mod revision 0: never let an update create it.
        Compare::version(etcd_key.as_str(), CompareOp::Greater, 0),
    ];
    if value.len() <= INLINE_COMPARE_LIMIT {
        when.push(Compare::value(
            etcd_key.as_str(),
            CompareOp::NotEqual,
            value.to_vec(),
        ));
    } else if let Some(current) = unchanged(store, key, &value, expected).await? {
        return Ok(current);
    }
    let mut options = PutOptions::new().with_prev_key();
    if let Some(id) = lease {
        options = options.with_lease(id);
    }
    let put = TxnOp::put(etcd_key.as_str(), value.to_vec(), Some(options));
    let txn = Txn::new()
        .when(when)
        .and_then([put])
        .or_else([TxnOp::get(etcd_key, None)]);
    let response = store.txn(txn).await?;
    let mut answers = response.op_responses().into_iter();
    if response.succeeded() {
        let created = match answers.next() {
            Some(TxnOpResponse::Put(put)) => put.prev_key().map(|kv| kv.create_revision()),
            _ => None,
        };
        let created = created.ok_or_else(|| {
            StorageError::Internal(format!("etcd updated {key} without its previous value"))
        })?;
        return Ok(KeyValue {
            key: key.to_owned(),
            value,
            create_revision: revision(created),
            mod_revision: header_revision(response.header())?,
        });
    }
    match read_answer(key, answers.next()) {
        None => Err(StorageError::NotFound(key.to_owned())),
        // The comparison failed only on the value: nothing to write.
        Some(current) if current.mod_revision == expected && current.value == value => Ok(current),
        Some(_) => Err(StorageError::Conflict(key.to_owned())),
    }
}

/// The current value when writing `value` over it would change nothing.
async fn unchanged(
    store: &EtcdStore,
    key: &str,
    value: &Bytes,
    expected: u64,
) -> Result<Option<KeyValue>, StorageError> {
    let current = super::list::get(store, key).await?;
    Ok(current.filter(|cur| cur.mod_revision == expected && cur.value == *value))
}

pub(super) async fn delete(
    store: &EtcdStore,
    key: &str,
    expected: Option<u64>,
) -> Result<KeyValue, StorageError> {
    let etcd_key = store.keys.to_etcd(key);
    let mut when = vec![Compare::version(etcd_key.as_str(), CompareOp::Greater, 0)];
    if let Some(expected) = expected {
        when.push(Compare::mod_revision(
            etcd_key.as_str(),
            CompareOp::Equal,
            etcd_revision(expected),
        ));
    }
    let remove = TxnOp::delete(
        etcd_key.as_str(),
        Some(DeleteOptions::new().with_prev_key()),
    );
    let txn = Txn::new()
        .when(when)
        .and_then([remove])
        .or_else([TxnOp::get(etcd_key, None)]);
    let response = store.txn(txn).await?;
    let mut answers = response.op_responses().into_iter();
    if response.succeeded() {
        let last = match answers.next() {
            Some(TxnOpResponse::Delete(mut deleted)) => deleted.take_prev_kvs().into_iter().next(),
            _ => None,
        };
        return last.map(|kv| key_value(key.to_owned(), kv)).ok_or_else(|| {
            StorageError::Internal(format!("etcd deleted {key} without its last value"))
        });
    }
    match read_answer(key, answers.next()) {
        None => Err(StorageError::NotFound(key.to_owned())),
        Some(_) => Err(StorageError::Conflict(key.to_owned())),
    }
}

/// The key read by a transaction's else branch, if it exists.
fn read_answer(key: &str, answer: Option<TxnOpResponse>) -> Option<KeyValue> {
    match answer {
        Some(TxnOpResponse::Get(mut read)) => read
            .take_kvs()
            .into_iter()
            .next()
            .map(|kv| key_value(key.to_owned(), kv)),
        _ => None,
    }
}
