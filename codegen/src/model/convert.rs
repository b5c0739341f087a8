use syn::Ident;

use crate::parse::ConvertInput;

/// A struct deriving `Convert`: how it maps to its hub struct.
pub struct ConvertModel {
    /// The struct.
    pub ident: Ident,
    /// The hub struct.
    pub hub: syn::Path,
    /// Field by field, or one hand-written module for both directions.
    pub mapping: Mapping,
}

/// How the struct maps to its hub.
pub enum Mapping {
    /// Every field to the hub field of the same (or the renamed) name.
    Fields(Vec<FieldMap>),
    /// `module::to_hub` and `module::from_hub`.
    With(syn::Path),
}

/// One field's counterpart in the hub.
pub struct FieldMap {
    /// The field here.
    pub ident: Ident,
    /// The field in the hub struct.
    pub hub_ident: Ident,
    /// A module converting the field, when the types are not `Convert`.
    pub with: Option<syn::Path>,
}

impl ConvertModel {
    /// Builds and checks the model, collecting every error.
    pub fn from_input(input: ConvertInput) -> darling::Result<ConvertModel> {
        let mut errors = darling::Error::accumulator();
        if !input.generics.params.is_empty() {
            errors.push(
                darling::Error::custom("Convert cannot be derived for generic structs")
                    .with_span(&input.generics),
            );
        }
        let Some(hub) = input.hub else {
            errors.push(
                darling::Error::custom(
                    "missing #[convert(hub = path::to::Type)]: the same struct in the kind's hub version",
                )
                .with_span(&input.ident),
            );
            return Err(darling::Error::multiple(errors.into_inner()));
        };
        let fields = input
            .data
            .take_struct()
            .map(|f| f.fields)
            .unwrap_or_default();
        let mapping = match input.with {
            Some(module) => {
                for field in fields
                    .iter()
                    .filter(|f| f.rename.is_some() || f.with.is_some())
                {
                    errors.push(
                        darling::Error::custom(
                            "field attributes have no effect when the struct's conversion is `with = ...`",
                        )
                        .with_span(&field.ty),
                    );
                }
                Mapping::With(module)
            }
            None => Mapping::Fields(
                fields
                    .into_iter()
                    .filter_map(|f| {
                        let ident = f.ident?;
                        let hub_ident = match &f.rename {
                            Some(name) => errors
                                .handle(name.parse::<Ident>().map_err(|_| {
                                    darling::Error::custom("rename must be a field name")
                                        .with_span(name)
                                }))
                                .unwrap_or_else(|| ident.clone()),
                            None => ident.clone(),
                        };
                        Some(FieldMap {
                            ident,
                            hub_ident,
                            with: f.with,
                        })
                    })
                    .collect(),
            ),
        };
        errors.finish_with(ConvertModel {
            ident: input.ident,
            hub,
            mapping,
        })
    }
}
