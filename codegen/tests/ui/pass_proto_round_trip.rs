//! A protobuf message with every field mode, an embedded message and a map,
//! round-tripped through its generated encode and decode.

use std::collections::BTreeMap;

use kapi_codegen::ApiType;
use kapi_runtime::proto::Message;
use serde::Serialize;

#[derive(ApiType, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[api(proto_embed(field = "source", number = 3, message = "Source"))]
pub struct Widget {
    #[api(proto = 1)]
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub replicas: Option<i32>,
    #[serde(skip_serializing_if = "kapi_runtime::go_json::omitempty")]
    #[api(proto = 1, proto_in = "source")]
    pub path: Option<String>,
    #[api(proto = 4)]
    pub labels: BTreeMap<String, String>,
    #[api(proto = 5)]
    pub parts: Vec<Part>,
    #[api(proto_skip)]
    pub kind: String,
}

#[derive(ApiType, Debug, Default, PartialEq, Serialize)]
pub struct Part {
    #[api(proto = 1)]
    pub size: i64,
}

fn main() {
    let w = Widget {
        name: "a".into(),
        replicas: Some(0),
        path: Some("/x".into()),
        labels: [("k".to_owned(), "v".to_owned())].into(),
        parts: vec![Part { size: -1 }, Part::default()],
        kind: String::new(),
    };
    let bytes = w.encode_to_vec();
    assert_eq!(bytes.len(), w.encoded_len());
    assert_eq!(Widget::decode(&bytes).unwrap(), w);
    // A Go value field's zero value reads back as None; a pointer's stays set.
    let empty = Widget { path: Some(String::new()), ..Widget::default() };
    let back = Widget::decode(&empty.encode_to_vec()).unwrap();
    assert_eq!(back.path, None);
    assert_eq!(back.replicas, None);
}
