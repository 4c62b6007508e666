//! Report prose as templates: a paper's page body is `experiments/configs/<paper>/templates/
//! report.md`, a [minijinja](https://docs.rs/minijinja) template beside the paper's configs
//! and findings, and the Rust side only computes what it shows (facts, tables, plots, rows).
//!
//! **What a template sees.**
//! * Every fact of the report ([`Facts`]), by its dotted name: `{{ wall_total }}`,
//!   `{{ delassus.newton.s192.converged }}`, `{{ config.table1.scene.params.h }}`. A fact is
//!   written in its own format ([`crate::findings::Fact::show`]), exactly as a findings
//!   placeholder `{{name}}` writes it; a name segment that is not an identifier is indexed:
//!   `{{ variants["no-stagnation"].s192.converged }}`, or the whole name given to
//!   `{{ fact("mlcp-fb+plm.s12.converged") }}`. `{{ x | num }}` is the fact's single number, for
//!   `{% if %}` (NaN when the data lack it), and `{% if x is measured %}` asks whether it is a
//!   number (not NaN). A fact declared absent ([`Facts::absent`]) is
//!   written as the findings write it (`*[not measured: ...]*`).
//! * `tables.<name>`: the markdown of a table the module gave [`Shown::table`] (its CSV file is
//!   written beside the page either way), `plots.<name>`: the file of a plot
//!   ([`crate::builder::Report::show_plot`]), for an image line whose alt text the template
//!   writes: `![average iterations per solve vs size]({{ plots.iterations_vs_size }})`.
//! * `<name>`: a value the module gave [`Shown::value`] (rows to loop over: any `Serialize`).
//!
//! **Strict.** A name that is neither a fact, a table, a plot nor a value fails the report with
//! the template's file and line (minijinja's strict undefined), and so does a table or a plot the
//! module computed that no template shows: nothing is computed for nothing, and no hand-written
//! list of keys is kept. [`render`] returns the facts the templates used, so that the builder
//! holds the report's own facts to the same rule: a family of facts that no template and no
//! finding quotes fails the report ([`crate::builder`]).
//!
//! Numbers a person writes and the data must confirm (`{{name = 302}}`) stay in the findings
//! ([`crate::findings`]): a template writes only what the data give, so it has no checked form.
//! Templates are markdown: nothing is escaped. Block tags take their line with them
//! (`trim_blocks`, `lstrip_blocks`), so `{% for %}` on its own line leaves no blank line.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use minijinja::value::{Object, ObjectRepr, Value};
use minijinja::{Environment, Error, ErrorKind, UndefinedBehavior};

use super::findings::{absent_note, Facts};
use crate::error::ReportError;

/// The folder of a paper's templates, inside its config folder.
pub const FOLDER: &str = "templates";

/// The template of a page's body, in [`FOLDER`]; other templates there are its sections
/// (`{% include "table1.md" %}`).
pub const BODY: &str = "report.md";

/// Root names a fact may not start with: the template's own namespaces.
const RESERVED: [&str; 3] = ["tables", "plots", "fact"];

/// What a page shows besides its facts: tables, plots and values, each by name.
#[derive(Debug, Default, Clone)]
pub struct Shown {
    tables: BTreeMap<String, String>,
    plots: BTreeMap<String, String>,
    values: BTreeMap<String, Value>,
}

impl Shown {
    /// Adds the markdown of table `name`; a name given twice is an error.
    pub fn table(&mut self, name: &str, markdown: String) -> Result<(), ReportError> {
        insert_once(&mut self.tables, "table", name, markdown)
    }

    /// Adds the file of plot `name`; a name given twice is an error.
    pub fn plot(&mut self, name: &str, image: String) -> Result<(), ReportError> {
        insert_once(&mut self.plots, "plot", name, image)
    }

    /// Adds `value` (rows, a list, a record) under `name`; a name given twice is an error.
    pub fn value(&mut self, name: &str, value: impl serde::Serialize) -> Result<(), ReportError> {
        insert_once(
            &mut self.values,
            "value",
            name,
            Value::from_serialize(value),
        )
    }

    /// Nothing to show.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty() && self.plots.is_empty() && self.values.is_empty()
    }
}

fn insert_once<V>(
    map: &mut BTreeMap<String, V>,
    kind: &str,
    name: &str,
    v: V,
) -> Result<(), ReportError> {
    if map.insert(name.to_string(), v).is_some() {
        return Err(ReportError::Template(format!(
            "the {kind} `{name}` is shown twice"
        )));
    }
    Ok(())
}

/// What rendering used and what went wrong inside objects (whose rendering cannot fail).
#[derive(Debug, Default)]
struct Ledger {
    facts: BTreeSet<String>,
    shown: BTreeSet<(&'static str, String)>,
    errors: Vec<ReportError>,
}

type Shared = Arc<Mutex<Ledger>>;

fn note(ledger: &Shared, f: impl FnOnce(&mut Ledger)) {
    if let Ok(mut l) = ledger.lock() {
        f(&mut l);
    }
}

/// A fact name, or the prefix of some (`delassus.newton`), as a template sees it.
#[derive(Debug)]
struct FactNode {
    facts: Arc<Facts>,
    name: String,
    ledger: Shared,
}

impl FactNode {
    /// The node of `name` when a fact has that name or starts with `name.`, or when `name` is
    /// declared absent.
    fn lookup(facts: &Arc<Facts>, name: String, ledger: &Shared) -> Option<FactNode> {
        let prefix = format!("{name}.");
        // An absent pattern may name a member further down (`peer.drake` below `peer`, or
        // `.drake.` below `peers.mujoco.drake`): the path to it must resolve.
        let absent_below = facts
            .absences()
            .any(|(p, _)| p.starts_with(&prefix) || prefix.contains(p));
        let known = facts.get(&name).is_some()
            || facts.names_from(&prefix).next().is_some()
            || facts.absent_reason(&name).is_some()
            || absent_below;
        known.then(|| FactNode {
            facts: facts.clone(),
            name,
            ledger: ledger.clone(),
        })
    }

    fn used(&self) {
        let name = self.name.clone();
        note(&self.ledger, |l| {
            l.facts.insert(name);
        });
    }
}

impl Object for FactNode {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let key = key.as_str().map_or_else(|| key.to_string(), str::to_string);
        FactNode::lookup(&self.facts, format!("{}.{key}", self.name), &self.ledger)
            .map(Value::from_object)
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.facts.get(&self.name) {
            Some(fact) => {
                self.used();
                f.write_str(&fact.show())
            }
            None => match self.facts.absent_reason(&self.name) {
                Some(reason) => f.write_str(&absent_note(reason)),
                None => {
                    let name = self.name.clone();
                    note(&self.ledger, |l| {
                        l.errors.push(ReportError::Template(format!(
                            "`{name}` names a group of facts, not a fact: write one of its members"
                        )))
                    });
                    f.write_str("?")
                }
            },
        }
    }
}

/// Tables or plots by name, recording which are shown.
#[derive(Debug)]
struct Snippets {
    kind: &'static str,
    items: BTreeMap<String, String>,
    ledger: Shared,
}

impl Object for Snippets {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let key = key.as_str()?;
        let item = self.items.get(key)?;
        let kind = self.kind;
        note(&self.ledger, |l| {
            l.shown.insert((kind, key.to_string()));
        });
        Some(Value::from_safe_string(item.clone()))
    }
}

/// A page rendered from its templates, and the facts it used.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The markdown.
    pub text: String,
    /// Every fact the templates wrote or compared.
    pub used_facts: BTreeSet<String>,
}

/// Renders [`BODY`] of the templates in `dir` (every `.md` file there, by its file name) with
/// `facts` and `shown` (see the module documentation). `None` when `dir` has no [`BODY`]: the
/// paper's page is still written by its module.
pub fn render(dir: &Path, facts: &Facts, shown: &Shown) -> Result<Option<Rendered>, ReportError> {
    if !dir.join(BODY).exists() {
        return Ok(None);
    }
    let env = environment(dir)?;
    let ledger: Shared = Arc::default();
    let facts = Arc::new(facts.clone());
    let context = context(&facts, shown, &ledger)?;
    let text = env
        .get_template(BODY)
        .and_then(|t| t.render(context))
        .map_err(|e| template_error(dir, &e))?;
    let ledger = std::mem::take(
        &mut *ledger
            .lock()
            .map_err(|_| ReportError::Template("a template's rendering panicked".to_string()))?,
    );
    let mut problems = ledger.errors;
    for (kind, items) in [("tables", &shown.tables), ("plots", &shown.plots)] {
        problems.extend(
            items
                .keys()
                .filter(|k| !ledger.shown.contains(&(kind, (*k).clone())))
                .map(|k| {
                    ReportError::Template(format!(
                        "`{kind}.{k}` is computed but no template shows it"
                    ))
                }),
        );
    }
    if !problems.is_empty() {
        let all: Vec<String> = problems.iter().map(ToString::to_string).collect();
        return Err(ReportError::Template(format!(
            "{}: {}",
            dir.display(),
            all.join("; ")
        )));
    }
    Ok(Some(Rendered {
        text,
        used_facts: ledger.facts,
    }))
}

/// The environment: strict undefined names, block tags that take their line, no escaping,
/// every template of `dir`, the `num` filter and the `fact` function.
fn environment(dir: &Path) -> Result<Environment<'static>, ReportError> {
    let mut env = base_environment();
    let mut files: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    for path in files {
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let source = std::fs::read_to_string(&path)?;
        env.add_template_owned(name, source)
            .map_err(|e| template_error(dir, &e))?;
    }
    env.add_filter("num", |v: Value| -> Result<f64, Error> {
        let node = fact_node(&v, "num")?;
        node.used();
        Ok(node.facts.value(&node.name))
    });
    env.add_test("measured", |v: Value| -> Result<bool, Error> {
        let node = fact_node(&v, "measured")?;
        node.used();
        Ok(!node.facts.value(&node.name).is_nan())
    });
    Ok(env)
}

/// Strict undefined names, block tags that take their line, no escaping.
fn base_environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_keep_trailing_newline(true);
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env
}

/// The page every report shares around its body (title, provenance, timing, findings).
pub const PAGE: (&str, &str) = ("page.md", include_str!("../templates/page.md"));

/// `facts.md` beside every report.
pub const FACTS_PAGE: (&str, &str) = ("facts.md", include_str!("../templates/facts.md"));

/// Renders one of the report crate's own templates ([`PAGE`], [`FACTS_PAGE`]) with `context`.
pub fn render_layout(
    (name, source): (&str, &str),
    context: impl serde::Serialize,
) -> Result<String, ReportError> {
    let mut env = base_environment();
    env.add_template(name, source)
        .and_then(|()| env.get_template(name)?.render(context))
        .map_err(|e| template_error(Path::new("experiments/report/templates"), &e))
}

/// The fact `v` is, for the filter or test `what`.
fn fact_node<'a>(v: &'a Value, what: &str) -> Result<&'a FactNode, Error> {
    v.downcast_object_ref::<FactNode>().ok_or_else(|| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("`{what}` takes a fact, not {v}"),
        )
    })
}

/// The root names: one [`FactNode`] per first segment of a fact name, `tables`, `plots`, the
/// values and the `fact` function.
fn context(facts: &Arc<Facts>, shown: &Shown, ledger: &Shared) -> Result<Value, ReportError> {
    let mut root: BTreeMap<String, Value> = BTreeMap::new();
    let roots: BTreeSet<&str> = facts
        .names()
        .chain(facts.absences().map(|(p, _)| p))
        .filter_map(|n| n.split('.').next())
        .filter(|r| !r.is_empty())
        .collect();
    for r in roots {
        if RESERVED.contains(&r) || shown.values.contains_key(r) {
            return Err(ReportError::Template(format!(
                "the fact root `{r}` is also a template name ({}, or a value)",
                RESERVED.join(", ")
            )));
        }
        if let Some(node) = FactNode::lookup(facts, r.to_string(), ledger) {
            root.insert(r.to_string(), Value::from_object(node));
        }
    }
    for (kind, items) in [("tables", &shown.tables), ("plots", &shown.plots)] {
        root.insert(
            kind.to_string(),
            Value::from_object(Snippets {
                kind,
                items: items.clone(),
                ledger: ledger.clone(),
            }),
        );
    }
    root.extend(shown.values.iter().map(|(k, v)| (k.clone(), v.clone())));
    let (facts, ledger) = (facts.clone(), ledger.clone());
    root.insert(
        "fact".to_string(),
        Value::from_function(move |name: &str| -> Result<Value, Error> {
            FactNode::lookup(&facts, name.to_string(), &ledger)
                .map(Value::from_object)
                .ok_or_else(|| Error::new(ErrorKind::UndefinedError, format!("no fact `{name}`")))
        }),
    );
    Ok(Value::from(root))
}

/// A template error with its file, line and minijinja's explanation.
fn template_error(dir: &Path, e: &Error) -> ReportError {
    let place = match (e.name(), e.line()) {
        (Some(n), Some(l)) => format!("{}:{l}", dir.join(n).display()),
        (Some(n), None) => dir.join(n).display().to_string(),
        _ => dir.display().to_string(),
    };
    ReportError::Template(format!("{place}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Fmt;

    fn scratch(name: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
        let d =
            std::env::temp_dir().join(format!("contactlab-template-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        for (f, text) in files {
            std::fs::write(d.join(f), text).unwrap();
        }
        d
    }

    fn facts() -> Facts {
        let mut f = Facts::new();
        f.num("wall_total", 12.345, Fmt::fixed(1).unit(" s"))
            .num("delassus.newton.s12.converged", 100.0, Fmt::int())
            .num("variants.no-stagnation.s12.converged", 97.0, Fmt::int())
            .list("published.converged", vec![99.0, 95.0, 81.0], Fmt::int())
            .text("best", "newton")
            .num("nan", f64::NAN, Fmt::int());
        f.absent(".drake.", "pydrake does not import");
        f
    }

    #[test]
    fn facts_tables_values_and_loops_render_and_uses_are_recorded() {
        let dir = scratch(
            "ok",
            &[
                (
                    BODY,
                    "Wall {{ wall_total }}, {{ delassus.newton.s12.converged }} of \
                     {{ variants[\"no-stagnation\"].s12.converged }}; {{ published.converged }}.\n\
                     {% if wall_total | num > 10 %}slow{% else %}fast{% endif %} {{ best }}\
                     {% if nan is measured %} measured{% endif %}\n\n\
                     {% include \"part.md\" %}",
                ),
                (
                    "part.md",
                    "{% for f in families %}\n- {{ f.name }}: {{ fact(\"delassus.newton.s12.converged\") }}\n{% endfor %}\n{{ tables.t1 }}![p]({{ plots.p }})\n\n{{ peer.drake.time }}\n",
                ),
            ],
        );
        let mut shown = Shown::default();
        shown.table("t1", "| a |\n".into()).unwrap();
        shown.plot("p", "p.svg".into()).unwrap();
        #[derive(serde::Serialize)]
        struct Family {
            name: &'static str,
        }
        shown
            .value("families", [Family { name: "Delassus" }])
            .unwrap();
        let mut f = facts();
        f.absent("peer.drake", "pydrake does not import");
        let r = render(&dir, &f, &shown).unwrap().unwrap();
        assert_eq!(
            r.text,
            "Wall 12.3 s, 100 of 97; 99, 95 and 81.\nslow newton\n- Delassus: 100\n| a |\n![p](p.svg)\n\n\
             *[not measured: pydrake does not import]*\n"
        );
        let used: Vec<&str> = r.used_facts.iter().map(String::as_str).collect();
        assert_eq!(
            used,
            [
                "best",
                "delassus.newton.s12.converged",
                "nan",
                "published.converged",
                "variants.no-stagnation.s12.converged",
                "wall_total"
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unknown_name_a_group_and_an_unshown_table_fail_with_the_file() {
        let dir = scratch("bad", &[(BODY, "a\n{{ delassus.newton.s13.converged }}\n")]);
        let e = render(&dir, &facts(), &Shown::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("report.md:2"), "{e}");
        let dir = scratch("group", &[(BODY, "{{ delassus.newton }}")]);
        let e = render(&dir, &facts(), &Shown::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("`delassus.newton` names a group"), "{e}");
        let dir = scratch("unshown", &[(BODY, "{{ wall_total }}")]);
        let mut shown = Shown::default();
        shown.table("t1", "| a |".into()).unwrap();
        let e = render(&dir, &facts(), &shown).unwrap_err().to_string();
        assert!(
            e.contains("`tables.t1` is computed but no template shows it"),
            "{e}"
        );
        assert!(shown.table("t1", String::new()).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn no_body_template_means_the_module_writes_the_page() {
        let dir = scratch("none", &[]);
        assert_eq!(render(&dir, &facts(), &Shown::default()).unwrap(), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_fact_root_may_not_hide_a_template_name() {
        let dir = scratch("reserved", &[(BODY, "x")]);
        let mut f = Facts::new();
        f.num("tables.x", 1.0, Fmt::int());
        let e = render(&dir, &f, &Shown::default()).unwrap_err().to_string();
        assert!(e.contains("`tables`"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
