//! The names of the run schema (`experiments/runs/src/schema.rs`): every column name its
//! modules declare as a `&str` constant and every top-level key of a run's metadata (a field
//! of its `RunMeta`: the field's name, or its `#[serde(rename = "..")]`). The keys of records
//! nested in the metadata are not counted: they are read only through `RunMeta` itself. Rule 5 of the house ([`crate::rules::Rule::SchemaLiteral`])
//! fails on a literal spelling one of them where the lab writes runs or the report reads them.

use std::collections::BTreeSet;

use syn::{Expr, Fields, Item, Lit};

/// The schema's file, from the workspace root.
pub const SCHEMA_FILE: &str = "experiments/runs/src/schema.rs";

/// The metadata's record, whose fields are the meta's top-level keys.
const META_RECORD: &str = "RunMeta";

/// Every column name and record key of the schema whose source is `source`.
pub fn names(source: &str) -> syn::Result<BTreeSet<String>> {
    let file = syn::parse_file(source)?;
    let mut out = BTreeSet::new();
    collect(&file.items, &mut out);
    Ok(out)
}

fn collect(items: &[Item], out: &mut BTreeSet<String>) {
    for item in items {
        match item {
            Item::Const(c) => {
                if let Expr::Lit(e) = &*c.expr {
                    if let Lit::Str(s) = &e.lit {
                        out.insert(s.value());
                    }
                }
            }
            Item::Mod(m) if !crate::scan::is_test(&m.attrs) => {
                if let Some((_, items)) = &m.content {
                    collect(items, out);
                }
            }
            Item::Struct(s) if s.ident == META_RECORD => {
                if let Fields::Named(fields) = &s.fields {
                    for f in &fields.named {
                        let name =
                            renamed(&f.attrs).or_else(|| f.ident.as_ref().map(ToString::to_string));
                        out.extend(name);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The name of a field's `#[serde(rename = "..")]`, if it has one.
fn renamed(attrs: &[syn::Attribute]) -> Option<String> {
    let mut name = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                let s: syn::LitStr = meta.value()?.parse()?;
                name = Some(s.value());
            } else if meta.input.peek(syn::Token![=]) {
                // Another `key = value` (skip_serializing_if, with, ..): consume its value.
                let _: Expr = meta.value()?.parse()?;
            }
            Ok(())
        });
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_fields_and_renames_are_the_schemas_names() {
        let source = r#"
            pub mod steps { pub const SOLVER: &str = "solver"; pub const N: usize = 3; }
            pub struct Nested { pub steps: u64 }
            #[derive(Serialize)]
            pub struct RunMeta {
                #[serde(skip_serializing_if = "Option::is_none")]
                pub runs: Option<u64>,
                #[serde(rename = "load_average_1min")]
                pub load_average: Option<f64>,
            }
            #[cfg(test)]
            mod tests { const X: &str = "not_a_column"; }
        "#;
        let got: Vec<String> = names(source).unwrap().into_iter().collect();
        assert_eq!(got, ["load_average_1min", "runs", "solver"]);
    }
}
