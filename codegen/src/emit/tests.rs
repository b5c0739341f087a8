//! Snapshots of the generated code: review a diff of `snapshots/*.snap` like code
//! (`cargo insta review`, or `INSTA_UPDATE=always` then `git diff`).

use proc_macro2::TokenStream;
use quote::quote;

fn pretty(tokens: TokenStream) -> String {
    let file: syn::File = syn::parse2(tokens).expect("the expansion is a list of items");
    prettyplease::unparse(&file)
}

/// Every rule, defaults of each literal kind, a renamed, a flattened, a skipped and
/// a nested field.
#[test]
fn api_type_with_every_rule() {
    let expanded = super::api_type::expand(quote! {
        #[serde(rename_all = "camelCase")]
        pub struct ServiceSpec {
            #[api(required, format = "dns1123-label")]
            pub name: String,
            #[serde(default)]
            #[api(format = "dns1123-subdomain")]
            pub external_name: Option<String>,
            #[serde(default)]
            #[api(one_of("ClusterIP", "NodePort"), default = "ClusterIP")]
            pub r#type: Option<String>,
            #[serde(default)]
            #[api(minimum = 1, maximum = 65535, default = 8080)]
            pub port: Option<u32>,
            #[serde(default)]
            #[api(minimum = -1, default = -1)]
            pub revision_limit: Option<i64>,
            #[serde(default)]
            #[api(maximum = 1.5, default = 1)]
            pub ratio: Option<f64>,
            #[serde(default)]
            #[api(default = true)]
            pub publish: Option<bool>,
            #[serde(rename = "clusterIP")]
            pub cluster_ip: Option<String>,
            #[api(required)]
            pub ports: Vec<ServicePort>,
            #[serde(flatten)]
            pub session: SessionAffinity,
            #[serde(skip)]
            #[api(required)]
            pub cache: String,
        }
    });
    insta::assert_snapshot!(pretty(expanded));
}

/// Every `#[resource]` key and all three hooks, with the registration.
#[test]
fn resource_with_every_key() {
    let expanded = super::resource::expand(quote! {
        #[resource(
            group = "apps.example.com",
            version = "v1beta1",
            kind = "Widget",
            plural = "widgets",
            singular = "widget",
            storage_prefix = "widgets.example/things",
            storage_json,
            stored_as = crate::stored::WIDGET_V1ALPHA1,
            short_names("wd"),
            categories("all", "example"),
            cluster_scoped,
            status,
            selectable_fields("spec.nodeName"),
            indexed_fields("spec.nodeName"),
            return_deleted_object,
            generation = false,
            reset_status = "spec, metadata.labels",
            name_format = "dns1123-label",
            printer_column(name = "Replicas", type = "integer", json_path = ".spec.replicas"),
            printer_column(
                name = "Age",
                type = "date",
                json_path = ".metadata.creationTimestamp",
                priority = 1,
                description = "Time since creation",
                format = "date-time"
            ),
            subresource(name = "eviction", group = "policy", version = "v1", kind = "Eviction"),
            subresource(
                name = "approval",
                verbs("get", "update"),
                prepare_update = hooks::take_approval,
                validate_update = hooks::validate_approval
            ),
            prepare = hooks::prepare,
            prepare_create = hooks::prepare_create,
            prepare_update = hooks::prepare_update,
            prepare_status_update = hooks::prepare_status_update,
            validate_update = hooks::validate_update,
            warnings = hooks::warnings,
            table_cells = hooks::cells,
            grace_period = hooks::grace,
            field_label = hooks::field_label,
            validate_served = hooks::validate_served
        )]
        pub struct WidgetObject {
            pub metadata: ObjectMeta,
            pub spec: WidgetSpec,
            pub status: Option<WidgetStatus>,
        }
    });
    insta::assert_snapshot!(pretty(expanded));
}

/// Only the required keys: names from the kind, namespaced, no hooks.
#[test]
fn resource_defaults() {
    let expanded = super::resource::expand(quote! {
        #[resource(group = "", version = "v1")]
        pub struct NetworkPolicy {
            pub metadata: ObjectMeta,
        }
    });
    insta::assert_snapshot!(pretty(expanded));
}

/// A failed derive emits its errors and an empty impl, so the type's other uses
/// raise no secondary errors.
#[test]
fn api_type_error_stub() {
    let expanded = super::api_type::expand(quote! {
        pub struct Holder<T> {
            #[api(format = "email")]
            pub value: T,
        }
    });
    insta::assert_snapshot!(pretty(expanded));
}
