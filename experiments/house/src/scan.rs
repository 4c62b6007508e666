//! One source file read as syntax: its functions outside tests with their length and
//! parameters, and its string literals outside tests and error messages.
//!
//! What "outside tests" means here: an item (module, function, impl, ...), an impl item or a
//! trait item is test code when one of its attributes is `#[cfg(P)]` with `P` either `test` or
//! `all(..)` holding such a `P`, or an attribute whose path ends in `test` (`#[test]`,
//! `#[tokio::test]`). Test code is skipped whole: neither its functions nor its literals are
//! seen. Whole files under a crate's `tests/` or `benches/` are left out by the caller
//! ([`crate::workspace`]), not here.
//!
//! What "inside an error message" means, exactly (the visitor keeps a depth, > 0 inside one):
//! - the body of a macro call whose name (last path segment) is one of [`ERROR_MACROS`];
//! - the arguments of a call whose callee path ends in one of [`ERROR_CALLS`] (`Err(..)`,
//!   `Option::expect(x, ..)`), or whose second-to-last segment ends in `Error` (an error
//!   type's variant or constructor: `ReportError::Published(..)`, `io::Error::other(..)`);
//!   the fields of a struct expression with such a path (`ReportError::Stale { .. }`);
//! - the arguments (not the receiver) of a method call named one of [`ERROR_CALLS`]
//!   (`.expect(..)`, `.map_err(..)`, `.ok_or(..)`, `.ok_or_else(..)`).
//!
//! Everything nested inside counts as inside, closures and `format!` included. A `format!`,
//! `write!` or `writeln!` anywhere else is prose like any other literal.
//!
//! Macro bodies are not syntax to `syn`: a macro call's tokens are parsed as comma-separated
//! expressions (what `format!`, `write!`, `assert!`, `vec!` take) and visited as such; when
//! they are not expressions (`matches!`, `df!`, `macro_rules!`), every string literal token in
//! them is taken at the macro call's depth. So no literal in a macro is missed, but functions
//! defined inside a macro call are not seen. Attributes are never visited: doc comments are
//! `#[doc = ".."]` attributes, not literals, and `#[error("..")]` is not code either. Byte
//! strings and C strings are not prose and are not collected.

use proc_macro2::{TokenStream, TokenTree};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::visit::{self, Visit};
use syn::{
    Attribute, Block, Expr, ExprCall, ExprMethodCall, ExprStruct, FnArg, ImplItem, Item, ItemFn,
    Lit, LitStr, Macro, Meta, Path, Signature, Token, TraitItem, Type, Visibility,
};

/// Macro calls whose body is an error message (or an assertion's).
pub const ERROR_MACROS: &[&str] = &[
    "panic",
    "unreachable",
    "todo",
    "unimplemented",
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "bail",
];

/// Calls and method calls whose arguments are an error message.
pub const ERROR_CALLS: &[&str] = &["expect", "map_err", "ok_or", "ok_or_else", "Err"];

/// A function with a body, outside tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// `module::Type::method`: the file's module path, then inline modules, the impl's type
    /// (`<Type as Trait>` for a trait impl) or the trait, enclosing functions, and the name.
    pub path: String,
    /// The line of `fn` (or of its visibility): attributes and doc comments are not counted.
    pub first_line: usize,
    /// The line of the body's closing brace.
    pub last_line: usize,
    /// Parameters, `self` not counted.
    pub params: usize,
}

impl Function {
    /// First to last line, both counted.
    pub fn lines(&self) -> usize {
        self.last_line + 1 - self.first_line
    }
}

/// A string literal outside tests and outside error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Literal {
    pub line: usize,
    /// Its value, escapes resolved.
    pub value: String,
}

impl Literal {
    /// Words: the value split on whitespace.
    pub fn words(&self) -> usize {
        self.value.split_whitespace().count()
    }
}

/// What one file holds outside tests.
#[derive(Debug, Default)]
pub struct Scan {
    pub functions: Vec<Function>,
    pub literals: Vec<Literal>,
}

/// Reads `source`, whose module path in its crate is `module` (`["analysis", "fidelity"]`).
pub fn scan(source: &str, module: &[String]) -> syn::Result<Scan> {
    let file = syn::parse_file(source)?;
    let mut v = Visitor {
        path: module.to_vec(),
        error_depth: 0,
        scan: Scan::default(),
    };
    v.visit_file(&file);
    Ok(v.scan)
}

struct Visitor {
    path: Vec<String>,
    error_depth: usize,
    scan: Scan,
}

impl Visitor {
    fn record(&mut self, name: String, first_line: usize, sig: &Signature, block: &Block) {
        let params = sig
            .inputs
            .iter()
            .filter(|a| matches!(a, FnArg::Typed(_)))
            .count();
        let mut path = self.path.clone();
        path.push(name);
        self.scan.functions.push(Function {
            path: path.join("::"),
            first_line,
            last_line: block.brace_token.span.close().end().line,
            params,
        });
    }

    /// Visits `f` with `name` pushed on the path (a module, a type, an enclosing function).
    fn within(&mut self, name: String, f: impl FnOnce(&mut Self)) {
        self.path.push(name);
        f(self);
        self.path.pop();
    }

    /// Visits `f` inside an error message.
    fn in_error(&mut self, f: impl FnOnce(&mut Self)) {
        self.error_depth += 1;
        f(self);
        self.error_depth -= 1;
    }

    fn literal(&mut self, lit: &LitStr) {
        if self.error_depth == 0 {
            self.scan.literals.push(Literal {
                line: lit.span().start().line,
                value: lit.value(),
            });
        }
    }

    /// Every string literal token in `tokens`, at the current depth.
    fn literal_tokens(&mut self, tokens: TokenStream) {
        for tt in tokens {
            match tt {
                TokenTree::Group(g) => self.literal_tokens(g.stream()),
                TokenTree::Literal(l) => {
                    if let Lit::Str(s) = Lit::new(l) {
                        self.literal(&s);
                    }
                }
                TokenTree::Ident(_) | TokenTree::Punct(_) => {}
            }
        }
    }
}

/// The first line of a function: its visibility's, else its signature's.
fn first_line(vis: &Visibility, sig: &Signature) -> usize {
    let sig_line = sig.span().start().line;
    match vis {
        Visibility::Inherited => sig_line,
        v => v.span().start().line.min(sig_line),
    }
}

fn last_ident(path: &Path) -> Option<String> {
    path.segments.last().map(|s| s.ident.to_string())
}

/// `Err`, `expect`, .., or `XError::Variant`.
fn is_error_path(path: &Path) -> bool {
    let n = path.segments.len();
    last_ident(path).is_some_and(|l| ERROR_CALLS.contains(&l.as_str()))
        || (n >= 2 && path.segments[n - 2].ident.to_string().ends_with("Error"))
}

/// A type's name on a function's path: its last segment (`Foo<T>` -> `Foo`, `&Foo` -> `Foo`).
fn type_name(ty: &Type) -> String {
    match ty {
        Type::Path(p) => last_ident(&p.path).unwrap_or_default(),
        Type::Reference(r) => type_name(&r.elem),
        Type::Paren(p) => type_name(&p.elem),
        Type::Group(g) => type_name(&g.elem),
        Type::Slice(s) => format!("[{}]", type_name(&s.elem)),
        Type::Array(a) => format!("[{}]", type_name(&a.elem)),
        Type::Tuple(_) => "()".to_string(),
        _ => "_".to_string(),
    }
}

/// `test`, or `all(.., test, ..)`: a configuration only tests build.
fn test_only(meta: &Meta) -> bool {
    match meta {
        Meta::Path(p) => p.is_ident("test"),
        Meta::List(l) if l.path.is_ident("all") => l
            .parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
            .is_ok_and(|ms| ms.iter().any(test_only)),
        _ => false,
    }
}

/// Whether these attributes make their item test code.
pub fn is_test(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        if a.path().is_ident("cfg") {
            a.parse_args::<Meta>().is_ok_and(|m| test_only(&m))
        } else {
            matches!(a.meta, Meta::Path(_)) && last_ident(a.path()).is_some_and(|l| l == "test")
        }
    })
}

fn item_attrs(item: &Item) -> &[Attribute] {
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

impl<'ast> Visit<'ast> for Visitor {
    fn visit_attribute(&mut self, _: &'ast Attribute) {}

    fn visit_item(&mut self, item: &'ast Item) {
        if !is_test(item_attrs(item)) {
            visit::visit_item(self, item);
        }
    }

    fn visit_impl_item(&mut self, item: &'ast ImplItem) {
        let attrs: &[Attribute] = match item {
            ImplItem::Const(i) => &i.attrs,
            ImplItem::Fn(i) => &i.attrs,
            ImplItem::Type(i) => &i.attrs,
            ImplItem::Macro(i) => &i.attrs,
            _ => &[],
        };
        if !is_test(attrs) {
            visit::visit_impl_item(self, item);
        }
    }

    fn visit_trait_item(&mut self, item: &'ast TraitItem) {
        let attrs: &[Attribute] = match item {
            TraitItem::Const(i) => &i.attrs,
            TraitItem::Fn(i) => &i.attrs,
            TraitItem::Type(i) => &i.attrs,
            TraitItem::Macro(i) => &i.attrs,
            _ => &[],
        };
        if !is_test(attrs) {
            visit::visit_trait_item(self, item);
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        self.within(m.ident.to_string(), |v| visit::visit_item_mod(v, m));
    }

    fn visit_item_fn(&mut self, f: &'ast ItemFn) {
        let name = f.sig.ident.to_string();
        self.record(name.clone(), first_line(&f.vis, &f.sig), &f.sig, &f.block);
        self.within(name, |v| visit::visit_item_fn(v, f));
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        let ty = type_name(&i.self_ty);
        let name = match &i.trait_ {
            Some((_, t, _)) => format!("<{ty} as {}>", last_ident(t).unwrap_or_default()),
            None => ty,
        };
        self.within(name, |v| visit::visit_item_impl(v, i));
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        let name = f.sig.ident.to_string();
        self.record(name.clone(), first_line(&f.vis, &f.sig), &f.sig, &f.block);
        self.within(name, |v| visit::visit_impl_item_fn(v, f));
    }

    fn visit_item_trait(&mut self, t: &'ast syn::ItemTrait) {
        self.within(t.ident.to_string(), |v| visit::visit_item_trait(v, t));
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        let name = f.sig.ident.to_string();
        if let Some(block) = &f.default {
            let first = first_line(&Visibility::Inherited, &f.sig);
            self.record(name.clone(), first, &f.sig, block);
        }
        self.within(name, |v| visit::visit_trait_item_fn(v, f));
    }

    fn visit_lit_str(&mut self, lit: &'ast LitStr) {
        self.literal(lit);
    }

    fn visit_expr_call(&mut self, call: &'ast ExprCall) {
        self.visit_expr(&call.func);
        let error = matches!(&*call.func, Expr::Path(p) if is_error_path(&p.path));
        let args = |v: &mut Self| call.args.iter().for_each(|a| v.visit_expr(a));
        if error {
            self.in_error(args);
        } else {
            args(self);
        }
    }

    fn visit_expr_method_call(&mut self, call: &'ast ExprMethodCall) {
        self.visit_expr(&call.receiver);
        let error = ERROR_CALLS.contains(&call.method.to_string().as_str());
        let args = |v: &mut Self| call.args.iter().for_each(|a| v.visit_expr(a));
        if error {
            self.in_error(args);
        } else {
            args(self);
        }
    }

    fn visit_expr_struct(&mut self, s: &'ast ExprStruct) {
        if is_error_path(&s.path) {
            self.in_error(|v| visit::visit_expr_struct(v, s));
        } else {
            visit::visit_expr_struct(self, s);
        }
    }

    fn visit_macro(&mut self, mac: &'ast Macro) {
        let error = last_ident(&mac.path).is_some_and(|n| ERROR_MACROS.contains(&n.as_str()));
        let body = |v: &mut Self| match mac
            .parse_body_with(Punctuated::<Expr, Token![,]>::parse_terminated)
        {
            Ok(exprs) => exprs.iter().for_each(|e| v.visit_expr(e)),
            Err(_) => v.literal_tokens(mac.tokens.clone()),
        };
        if error {
            self.in_error(body);
        } else {
            body(self);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(source: &str) -> Scan {
        scan(source, &["m".to_string()]).unwrap()
    }

    /// A function whose item spans `lines` lines, first to last.
    fn function_of(lines: usize) -> String {
        let mut s = String::from("fn long() {\n");
        for k in 0..lines - 2 {
            s.push_str(&format!("    let _x{k} = {k};\n"));
        }
        s.push_str("}\n");
        s
    }

    #[test]
    fn a_function_is_measured_from_fn_to_its_closing_brace() {
        let source = format!("/// Doc.\n#[inline]\n{}", function_of(101));
        let s = run(&source);
        assert_eq!(s.functions.len(), 1);
        assert_eq!(s.functions[0].path, "m::long");
        assert_eq!(s.functions[0].first_line, 3);
        assert_eq!(s.functions[0].lines(), 101);
        assert_eq!(run(&function_of(100)).functions[0].lines(), 100);
    }

    #[test]
    fn parameters_are_counted_without_self() {
        let source = "struct S;\nimpl S {\n    pub fn f(&self, a: u8, b: u8, c: u8, d: u8, e: u8, \
                      f: u8, g: u8) {}\n}\nimpl Clone for S { fn clone(&self) -> S { S } }\n\
                      trait T { fn t(a: u8, b: u8, c: u8, d: u8, e: u8, f: u8, g: u8, h: u8) {} \
                      fn no_body(&self); }\nfn free(a: u8, b: u8, c: u8, d: u8, e: u8, f: u8, \
                      g: u8, h: u8) {}\n";
        let s = run(source);
        let got: Vec<(&str, usize)> = s
            .functions
            .iter()
            .map(|f| (f.path.as_str(), f.params))
            .collect();
        assert_eq!(
            got,
            vec![
                ("m::S::f", 7),
                ("m::<S as Clone>::clone", 0),
                ("m::T::t", 8),
                ("m::free", 8)
            ]
        );
    }

    #[test]
    fn test_code_is_not_seen() {
        let source = format!(
            "#[cfg(test)]\nmod tests {{\n{}\n}}\n#[test]\nfn t() {{ let _ = \"one two three four \
             five six seven\"; }}\n#[cfg(all(test, unix))]\nfn helper() {{}}\n\
             #[cfg(not(test))]\nfn kept() {{}}\nstruct S;\nimpl S {{ #[cfg(test)] fn h() {{}} }}\n",
            function_of(120)
        );
        let s = run(&source);
        let paths: Vec<&str> = s.functions.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, vec!["m::kept"]);
        assert!(s.literals.is_empty());
    }

    fn literals(source: &str) -> Vec<(usize, usize)> {
        run(source)
            .literals
            .iter()
            .map(|l| (l.line, l.words()))
            .collect()
    }

    #[test]
    fn prose_in_format_is_a_literal() {
        let source =
            "fn f(x: u8) -> String {\n    format!(\"one two three four five six {x}\")\n}\n";
        assert_eq!(literals(source), vec![(2, 7)]);
        let source = "fn f(w: &mut String) { writeln!(w, \"a b c d e f g\").unwrap(); }\n";
        assert_eq!(literals(source), vec![(1, 7)]);
    }

    #[test]
    fn error_messages_are_not_literals() {
        let source = r#"
fn f(x: Option<u8>) -> Result<u8, ReportError> {
    let y = x.expect("one two three four five six seven");
    let z = x.ok_or_else(|| ReportError::Findings(format!("a b c d e f g {y}")))?;
    if z > 1 {
        return Err(ReportError::Published(format!("a b c d e f g {z}")));
    }
    assert!(z < 9, "one two three four five six seven");
    let _ = Err::<u8, String>("one two three four five six seven".into());
    let _ = std::io::Error::other("one two three four five six seven");
    let _ = ReportError::Stale { text: "one two three four five six seven".into() };
    "the receiver is not the message, it counts".parse::<u8>().expect("e");
    Ok(z)
}
"#;
        assert_eq!(literals(source), vec![(12, 8)]);
    }

    #[test]
    fn doc_comments_and_attributes_are_not_literals() {
        let source = r#"
//! The crate's doc, one two three four five six seven.
/// One two three four five six seven.
#[derive(Debug, thiserror::Error)]
pub enum E {
    /// One two three four five six seven.
    #[error("one two three four five six seven {0}")]
    A(String),
}
#[doc = "one two three four five six seven"]
pub const X: &str = "one two three four five six";
"#;
        assert_eq!(literals(source), vec![(11, 6)]);
    }

    #[test]
    fn literals_in_other_macros_are_found() {
        let source = "fn f() -> bool {\n    let _ = df!(\"a b c d e f g\" => [1]);\n    \
                      matches!(\"x\", \"a b c d e f g\")\n}\n";
        assert_eq!(literals(source), vec![(2, 7), (3, 1), (3, 7)]);
    }

    #[test]
    fn nested_functions_and_modules_have_paths() {
        let source = "mod inner { fn outer() { fn nested() {} } }\n";
        let paths: Vec<String> = run(source).functions.into_iter().map(|f| f.path).collect();
        assert_eq!(paths, vec!["m::inner::outer", "m::inner::outer::nested"]);
    }
}
