//! The `contactlab` command line: `solve`, `list`, `run`, `dump`, `report`, `reproduce`, and
//! `peers` (`reproduce peers`). Every command is a library function on a [`Lab`] writing to a
//! `Write`, so tests run them exactly as a user does, and with a lab of their own (an extended
//! registry).

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};
use contactlab_core::constraint::LABELS;
use contactlab_core::io::read_problem;
use contactlab_core::islands::{check_psd_by_island, PSD_REL_TOL};
use contactlab_core::{Constraints, CoreError, Problem, StepProblem};
use serde_json::{json, Map, Value};

use contactlab_lab::registry::{LocalSolve, Registry, RegistryError, SolverSpec};
use contactlab_lab::runner::RunError;
use contactlab_lab::solve::{generalized_velocity, spec_from_options, PLUGIN_PREFIXES};
use contactlab_lab::{Lab, Settings};
use contactlab_report::{ReportError, PAPERS};
use contactlab_runs::config::ConfigError;
use contactlab_runs::store::{parse_shard, StoreError};

/// contactlab: reproduce contact-dynamics papers and swap formulations against optimizers.
#[derive(Debug, Parser)]
#[command(name = "contactlab", version, about)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The options `contactlab solve` passes to the plugins. The papers' options have flags of
/// their own; any other goes through `--formulation-option` / `--optimizer-option KEY=VALUE`.
/// Each is given to its plugin only when set, and a plugin that has no such option refuses it
/// with an error naming the option.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SolveOptionArgs {
    /// Turn the friction pyramid's faces by this angle from `t1` (degrees; `mlcp-fb`, `min-map`).
    #[arg(long)]
    pub theta0_deg: Option<f64>,
    /// Turn the pyramid's faces against each contact's free slip `-q_t` (`mlcp-fb`, `min-map`).
    #[arg(long)]
    pub align_with_slip: bool,
    /// Friction directions per contact (`mlcp-fb`; the paper's 4 by default).
    #[arg(long)]
    pub n_f: Option<usize>,
    /// Restarts from a perturbed point after a local minimum (`implicit-ncp`, section V-A).
    #[arg(long)]
    pub restarts: Option<u32>,
    /// Solve the rescaled `D r(x) = 0`, `D` from the row sums of `A` (`implicit-ncp`, V-A).
    #[arg(long)]
    pub row_sum_scaling: bool,
    /// Any formulation option, `KEY=VALUE` (the value in TOML syntax); repeatable.
    #[arg(long = "formulation-option", short = 'F', value_name = "KEY=VALUE")]
    pub formulation_options: Vec<String>,
    /// Any optimizer option, `KEY=VALUE` (the value in TOML syntax), e.g. `edge_aware=false`
    /// for `todorov`; repeatable.
    #[arg(long = "optimizer-option", short = 'O', value_name = "KEY=VALUE")]
    pub optimizer_options: Vec<String>,
    /// Wall-clock limit of the solve, seconds (status `timeout` when it runs out).
    #[arg(long)]
    pub time_limit: Option<f64>,
    /// Relative tolerance on a merit's own scale (SAP's eq. 26 `eps_r`; `--tol` is `eps_a`).
    #[arg(long, default_value_t = 0.0)]
    pub rel_tol: f64,
    /// Solve the whole problem at once instead of island by island (to measure the gain).
    #[arg(long)]
    pub no_islands: bool,
    /// Keep the Delassus matrix `W` dense instead of as 3x3 blocks.
    #[arg(long)]
    pub dense: bool,
    /// Skip the check that a contact-space file's `W` is positive semidefinite, island by
    /// island (for users who know their `W` is not and want a solver's answer anyway).
    #[arg(long)]
    pub no_psd_check: bool,
}

/// Parses `KEY=VALUE` with a TOML value (a bare word that is not TOML is taken as a string).
fn key_value(s: &str) -> Result<(String, serde_json::Value), CliError> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| CliError::Usage(format!("option `{s}` is not KEY=VALUE")))?;
    let value: toml::Value = toml::from_str::<toml::Table>(&format!("v = {v}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(v.trim().to_string()));
    let json = serde_json::to_value(value).map_err(|e| CliError::Usage(e.to_string()))?;
    Ok((k.trim().to_string(), json))
}

impl SolveOptionArgs {
    /// These options as the flat set [`spec_from_options`] routes: the papers' flags and
    /// `-F`/`-O` under the plugin they name (`formulation.KEY`, `optimizer.KEY`), the spec's
    /// own under their names.
    pub fn options(&self) -> Result<Map<String, Value>, CliError> {
        let mut o = Map::new();
        let f = |k: &str| format!("{}{k}", PLUGIN_PREFIXES[0]);
        if let Some(t) = self.theta0_deg {
            o.insert(f("theta0_deg"), t.into());
        }
        if self.align_with_slip {
            o.insert(f("align_with_slip"), true.into());
        }
        if let Some(n) = self.n_f {
            o.insert(f("n_f"), n.into());
        }
        if let Some(k) = self.restarts {
            o.insert(f("restarts"), k.into());
        }
        if self.row_sum_scaling {
            o.insert(f("row_sum_scaling"), true.into());
        }
        for (prefix, items) in PLUGIN_PREFIXES
            .iter()
            .zip([&self.formulation_options, &self.optimizer_options])
        {
            for item in items {
                let (k, v) = key_value(item)?;
                o.insert(format!("{prefix}{k}"), v);
            }
        }
        o.insert("rel_tol".into(), self.rel_tol.into());
        o.insert("islands".into(), (!self.no_islands).into());
        o.insert("dense".into(), self.dense.into());
        Ok(o)
    }

    /// The full solver spec these options give to `formulation + optimizer`, checked (names,
    /// pairing, options, numbers) by [`spec_from_options`].
    pub fn spec(
        &self,
        registry: &Registry,
        formulation: &str,
        optimizer: &str,
        tol: f64,
        max_iter: u64,
    ) -> Result<SolverSpec, CliError> {
        let options = self.options()?;
        Ok(spec_from_options(
            registry,
            formulation,
            optimizer,
            tol,
            max_iter,
            self.time_limit,
            &options,
        )?)
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Solve one problem file (FCLib .hdf5 or .json) and print a summary or JSON.
    Solve {
        /// The problem file.
        file: PathBuf,
        /// Formulation name (see `contactlab list`).
        #[arg(long, default_value = "coulomb")]
        formulation: String,
        /// Optimizer name (see `contactlab list`).
        #[arg(long, default_value = "pgs")]
        optimizer: String,
        /// Bound on the natural-map residual for status `converged`.
        #[arg(long, default_value_t = 1e-8)]
        tol: f64,
        /// Iteration budget.
        #[arg(long, default_value_t = contactlab_lab::solve::SOLVE_MAX_ITER)]
        max_iter: u64,
        /// The plugins' options and the time limit.
        #[command(flatten)]
        options: SolveOptionArgs,
        /// Print one JSON object instead of a summary.
        #[arg(long)]
        json: bool,
    },
    /// Name the formulations, optimizers and papers available.
    List {
        /// Print `{"formulations": [...], "optimizers": [...], "papers": [...], "combinations": [...],
        /// "incompatible": [...]}`.
        #[arg(long)]
        json: bool,
    },
    /// Run a paper's reproduction: every config of the paper -> data -> report.
    Reproduce {
        /// The paper key (see `--list`).
        paper: Option<String>,
        /// List the papers and whether their reproduction exists.
        #[arg(long)]
        list: bool,
        /// Hide the progress bars.
        #[arg(long)]
        no_progress: bool,
        /// Run and stamp the report although tracked files outside `reports/` have uncommitted
        /// changes (its provenance then shows `+dirty` and the README says so).
        #[arg(long)]
        allow_dirty: bool,
    },
    /// Run one experiment config and write its DataFrames under `data/`.
    Run {
        /// The TOML config (e.g. experiments/configs/todorov2010/table1.toml).
        config: PathBuf,
        /// Run only part `k` of `N` of the sweep (`k/N`), for job arrays.
        #[arg(long)]
        shard: Option<String>,
        /// A matrix's set to run (repeatable; every set without): its rows go to
        /// `<name>-<sets>.parquet`, never over the whole matrix's.
        #[arg(long = "set")]
        sets: Vec<String>,
        /// Hide the progress bar.
        #[arg(long)]
        no_progress: bool,
    },
    /// `reproduce peers`: every formulation beside MuJoCo's constraint solver on
    /// `data/mujoco/`, and whole steps of our scenes beside MuJoCo's (and Drake's) on the same
    /// scenes, from the configs in `experiments/configs/peers/` (MuJoCo's side needs Python
    /// with `mujoco`; without it the report says it was not measured): writes `reports/peers/`.
    Peers {
        /// Hide the progress bars.
        #[arg(long)]
        no_progress: bool,
        /// As `reproduce --allow-dirty`.
        #[arg(long)]
        allow_dirty: bool,
    },
    /// Write the contact problems of chosen steps of a config's run as JSON problem files.
    Dump {
        /// The experiment config whose scene is simulated.
        config: PathBuf,
        /// Steps to keep: numbers and ranges `a..b` (end excluded), e.g. `10,50..53`.
        #[arg(long)]
        steps: String,
        /// The run of the config's sweep.
        #[arg(long, default_value_t = 0)]
        run: usize,
        /// `local` (W, q, mu) or `global` (M, H, f, w, mu).
        #[arg(long, default_value = "local")]
        form: contactlab_lab::dump::Form,
        /// Output folder.
        #[arg(long, default_value = "data/dumps")]
        out: PathBuf,
    },
    /// Regenerate a paper's report from the data already under `data/`.
    Report {
        /// The paper key.
        paper: String,
        /// Stamp the report although tracked files outside `reports/` have uncommitted changes
        /// (its provenance then shows `+dirty` and the README says so).
        #[arg(long)]
        allow_dirty: bool,
    },
}

/// Errors a command reports to the user (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Reading or converting the problem failed.
    #[error(transparent)]
    Core(#[from] CoreError),
    /// A name lookup or a solve failed.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// A bad option value.
    #[error("{0}")]
    Usage(String),
    /// Writing the output failed.
    #[error("output: {0}")]
    Output(#[from] std::io::Error),
    /// An experiment config is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// An experiment run failed.
    #[error(transparent)]
    Run(#[from] RunError),
    /// A run's files could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Generating a report failed.
    #[error(transparent)]
    Report(#[from] ReportError),
    /// A report would be stamped from a tree with uncommitted changes.
    #[error("{0}")]
    Dirty(String),
}

/// Whether a report may be stamped from the checkout at `root`: refused when tracked files
/// outside `reports/` have uncommitted changes (the provenance would record `+dirty`, and
/// no commit would hold the code that made the numbers), unless `allow_dirty`. A folder that
/// is not a git checkout has no commit to be faithful to and passes.
pub fn check_tree(root: &Path, allow_dirty: bool) -> Result<(), CliError> {
    let commit = contactlab_runs::provenance::tree_commit(root);
    if allow_dirty || !contactlab_runs::provenance::is_dirty(&commit) {
        return Ok(());
    }
    Err(CliError::Dirty(format!(
        "{}: tracked files outside reports/ have uncommitted changes (commit `{commit}`): a \
         report stamped from this tree would name a commit that does not hold the code behind \
         its numbers. Commit first, or pass --allow-dirty (the report then says it came from \
         a dirty tree).",
        root.display()
    )))
}

/// `contactlab run`: one config (an experiment sweep or a matrix) -> its rows under
/// `data/runs/` (or the shard's files) and a `.meta.json` beside them ([`Lab::run`]).
pub fn run_config(
    lab: &Lab,
    config: &Path,
    shard: Option<(usize, usize)>,
    sets: &[String],
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let summary = lab.run_sets(config, shard, sets, out)?;
    writeln!(
        out,
        "{}: {} runs, {} rows in {:.1} s -> {}",
        summary.name,
        summary.runs,
        summary.rows,
        summary.wall_seconds,
        summary.path.display()
    )?;
    Ok(())
}

/// `contactlab report`: regenerates `reports/<paper>/` from the runs under `root` (the
/// [`PAPERS`] table says which generator writes it); refused on a dirty tree unless
/// `allow_dirty` ([`check_tree`]).
pub fn report(
    paper: &str,
    root: &Path,
    allow_dirty: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let p = contactlab_report::paper(paper)?;
    check_tree(root, allow_dirty)?;
    (p.generate)(root)?;
    writeln!(
        out,
        "wrote {}",
        root.join("reports").join(p.id).join("README.md").display()
    )?;
    Ok(())
}

/// Runs a parsed command line with the standard lab (the standard registry on this workspace),
/// with progress bars unless the command hides them.
pub fn run(cli: Cli, out: &mut dyn Write) -> Result<(), CliError> {
    let progress = match &cli.command {
        Command::Run { no_progress, .. }
        | Command::Reproduce { no_progress, .. }
        | Command::Peers { no_progress, .. } => !no_progress,
        _ => false,
    };
    let lab = Lab::standard().with_settings(Settings {
        progress,
        ..Settings::default()
    });
    run_with(&lab, cli, out)
}

/// Runs a parsed command line with `lab`: its registry, its root and its settings.
pub fn run_with(lab: &Lab, cli: Cli, out: &mut dyn Write) -> Result<(), CliError> {
    match cli.command {
        Command::Solve {
            file,
            formulation,
            optimizer,
            tol,
            max_iter,
            options,
            json,
        } => {
            let spec = options.spec(lab.registry(), &formulation, &optimizer, tol, max_iter)?;
            solve_file(lab, &file, &spec, !options.no_psd_check, json, out)
        }
        Command::List { json } => list_registry(lab.registry(), json, out),
        Command::Reproduce {
            paper,
            list,
            allow_dirty,
            ..
        } => reproduce(lab, paper.as_deref(), list, allow_dirty, out),
        Command::Run {
            config,
            shard,
            sets,
            ..
        } => {
            let shard = shard.as_deref().map(parse_shard).transpose()?;
            run_config(lab, &config, shard, &sets, out)
        }
        Command::Dump {
            config,
            steps,
            run,
            form,
            out: dir,
        } => {
            let steps = contactlab_lab::dump::parse_steps(&steps).map_err(CliError::Usage)?;
            let files = lab.dump(&config, run, &steps, form, &dir)?;
            for f in files {
                writeln!(out, "wrote {}", f.display())?;
            }
            Ok(())
        }
        Command::Report { paper, allow_dirty } => report(&paper, lab.root(), allow_dirty, out),
        Command::Peers { allow_dirty, .. } => {
            reproduce(lab, Some("peers"), false, allow_dirty, out)
        }
    }
}

/// The solver spec `contactlab solve` builds from its arguments, checked as the command checks
/// it (names, pairing, options, `--tol`, `--rel-tol`, `--time-limit`) but without reading the
/// problem file or solving anything.
pub fn check_solve_args(
    registry: &Registry,
    formulation: &str,
    optimizer: &str,
    tol: f64,
    max_iter: u64,
    options: &SolveOptionArgs,
) -> Result<SolverSpec, CliError> {
    options.spec(registry, formulation, optimizer, tol, max_iter)
}

/// `contactlab solve` with every option of `spec`, `W` checked for semidefiniteness.
pub fn solve_spec(
    lab: &Lab,
    file: &Path,
    spec: &SolverSpec,
    as_json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    solve_file(lab, file, spec, true, as_json, out)
}

/// `contactlab solve`: reads `file`, checks a contact-space problem's `W` for positive
/// semidefiniteness island by island when `check_psd` ([`check_psd_by_island`]; a global
/// problem's `W = H' M^-1 H` is semidefinite once `M` factors), solves it as `spec` says, and
/// prints a summary or JSON.
pub fn solve_file(
    lab: &Lab,
    file: &Path,
    spec: &SolverSpec,
    check_psd: bool,
    as_json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let (formulation, optimizer, tol) = (
        spec.formulation.name.as_str(),
        spec.optimizer.name.as_str(),
        spec.tol,
    );
    let resolved = lab.resolve(spec)?;
    let problem = read_problem(file)?;
    if let (true, Problem::Local(p)) = (check_psd, &problem) {
        check_psd_by_island(p, PSD_REL_TOL).map_err(|e| CoreError::File {
            path: file.to_path_buf(),
            field: None,
            message: e.to_string(),
        })?;
    }
    // A global problem stays generalized: SAP solves it as it is, contact-space formulations
    // get W = H' M^-1 H, q = H' M^-1 f + w, formed once on demand.
    let step = StepProblem::from_problem(&problem)?;
    let global = match &problem {
        Problem::Local(_) => None,
        Problem::Global(g) => Some(g),
    };
    let s = resolved.solve(&step, None)?;
    let v = global.map(|g| generalized_velocity(g, &s.r)).transpose()?;
    if as_json {
        let mut obj = json!({
            "file": file.display().to_string(),
            "kind": if global.is_some() { "global" } else { "local" },
            "contacts": step.num_contacts(),
            "formulation": formulation,
            "optimizer": optimizer,
            "tol": tol,
            "options": resolved.formulation.options(),
            "optimizer_options": resolved.driver.options(),
            "model": resolved.formulation.model().as_str(),
            "time_limit": spec.time_limit,
            "status": s.status.as_str(),
            "solver_status": s.solver_status.as_str(),
            "iterations": s.iterations,
            "seconds": s.seconds,
            "residual": s.metrics.natural_map,
            "cone_violation": s.metrics.cone_violation,
            "dual_cone_violation": s.metrics.dual_cone_violation,
            "complementarity_gap": s.metrics.complementarity_gap,
            "counters": s.counters,
            "diagnostics": s.diagnostics,
            "r": s.r,
            "u": s.u,
        });
        if let Some(v) = v {
            obj["v"] = json!(v);
        }
        writeln!(out, "{obj}")?;
    } else {
        let rows = match step.local_if_formed() {
            Some(l) => l.constraints.clone(),
            None => Constraints::coulomb(&step.mu()),
        };
        write_summary(file, (&rows, global.is_some()), spec, &s, out)?;
    }
    Ok(())
}

/// `contactlab solve`'s summary of the answer `s` to `file` (its rows' constraint blocks, a
/// `global` problem or a local one) by `spec`'s solver: its status, the formulation's own
/// accuracy figures and the shared ruler's metrics, the residual against `spec.tol`.
fn write_summary(
    file: &Path,
    (rows, global): (&Constraints, bool),
    spec: &SolverSpec,
    s: &LocalSolve,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let (formulation, optimizer, tol) = (&spec.formulation.name, &spec.optimizer.name, spec.tol);
    // A block is active when its impulse is not zero (a contact: when it pushes).
    let active = rows
        .iter()
        .filter(|(r, _)| {
            s.r.get(r.clone())
                .is_some_and(|x| x.iter().any(|v| *v != 0.0))
        })
        .count();
    let what = if rows.coulomb_only() {
        format!("{} contacts", rows.len())
    } else {
        format!(
            "{} constraint blocks ({})",
            rows.len(),
            rows.kinds().join(", ")
        )
    };
    writeln!(
        out,
        "{}: {} problem, {what} ({active} active at the solution)",
        file.display(),
        if global { "global" } else { "local" },
    )?;
    writeln!(
        out,
        "{formulation} + {optimizer}: {} after {} iterations, {:.3e} s",
        s.status, s.iterations, s.seconds
    )?;
    if s.status != s.solver_status {
        writeln!(out, "  (the driver itself reported: {})", s.solver_status)?;
    }
    for (k, v) in &s.diagnostics {
        writeln!(out, "  {k:<22} {v:.3e}  (the formulation's own accuracy)")?;
    }
    if s.model == contactlab_core::plugin::Model::Regularized {
        writeln!(
            out,
            "  the rigid Coulomb ruler below measures how far this regularized model's answer is \
             from rigid contact, not whether the solver converged:"
        )?;
        writeln!(
            out,
            "  natural-map residual   {:.3e}",
            s.metrics.natural_map
        )?;
    } else {
        writeln!(
            out,
            "  natural-map residual   {:.3e}  (tol {tol:.1e})",
            s.metrics.natural_map
        )?;
    }
    writeln!(
        out,
        "  cone violation         {:.3e}",
        s.metrics.cone_violation
    )?;
    writeln!(
        out,
        "  dual-cone violation    {:.3e}",
        s.metrics.dual_cone_violation
    )?;
    writeln!(
        out,
        "  complementarity gap    {:.3e}",
        s.metrics.complementarity_gap
    )?;
    Ok(())
}

/// `contactlab list`: every formulation of `reg` with its options and the optimizers that run
/// it, every optimizer with what it needs, why each remaining pair cannot run, and the reports.
pub fn list_registry(reg: &Registry, as_json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let mut incompatible = Vec::new();
    for f in reg.formulations() {
        for d in reg.drivers() {
            if let Some(reason) = reg.incompatibility(f, d) {
                incompatible.push((f.name, d.name, reason));
            }
        }
    }
    if as_json {
        let v = json!({
            "formulations": reg.formulations().iter().map(|f| f.name).collect::<Vec<_>>(),
            "optimizers": reg.drivers().iter().map(|d| d.name).collect::<Vec<_>>(),
            "papers": PAPERS.iter().map(|p| p.id).collect::<Vec<_>>(),
            "combinations": reg.formulations().iter().map(|f| json!({
                "formulation": f.name,
                "optimizers": reg.drivers_for(f),
                "model": f.model.as_str(),
                "exact_cone": f.model == contactlab_core::plugin::Model::CoulombCone,
                "provides": f.provides,
                "options": f.defaults,
            })).collect::<Vec<_>>(),
            "drivers": reg.drivers().iter().map(|d| json!({
                "optimizer": d.name, "needs": d.needs, "options": d.defaults,
                "model": d.model.map(|m| m.as_str()), "kinds": d.kinds, "refuses": d.refuses,
            })).collect::<Vec<_>>(),
            "pairs": reg.pairs().iter().map(|p| json!({
                "formulation": p.formulation, "optimizer": p.optimizer,
                "kinds": reg.formulation(p.formulation).ok().zip(reg.driver(p.optimizer).ok())
                    .map(|(f, d)| Registry::pair_kinds(f, d)).unwrap_or_default(),
                "refuses": reg.formulation(p.formulation).ok().zip(reg.driver(p.optimizer).ok())
                    .map(|(f, d)| Registry::pair_refusals(f, d)).unwrap_or_default()
                    .into_iter().map(|(k, why)| json!({"kind": k, "reason": why}))
                    .collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "incompatible": incompatible.iter().map(|(f, d, why)| json!({
                "formulation": f, "optimizer": d, "reason": why,
            })).collect::<Vec<_>>(),
        });
        writeln!(out, "{v}")?;
        return Ok(());
    }
    let options = |v: &serde_json::Value| match v.as_object() {
        Some(m) if !m.is_empty() => m
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect::<Vec<_>>()
            .join(", "),
        _ => "none".into(),
    };
    writeln!(
        out,
        "formulations (what they provide, their options, the optimizers that run them):"
    )?;
    for f in reg.formulations() {
        let provides: Vec<&str> = f.provides.iter().map(|n| n.trait_name()).collect();
        writeln!(out, "  {:<14} {}", f.name, f.description)?;
        writeln!(
            out,
            "  {:<14} model: {}; provides: {}",
            "",
            f.model.as_str(),
            provides.join(", ")
        )?;
        writeln!(out, "  {:<14} options: {}", "", options(&f.defaults))?;
        writeln!(
            out,
            "  {:<14} runs with: {}",
            "",
            reg.drivers_for(f).join(", ")
        )?;
    }
    writeln!(out, "optimizers (what they need, their options):")?;
    for d in reg.drivers() {
        writeln!(out, "  {:<14} {}", d.name, d.description)?;
        writeln!(
            out,
            "  {:<14} needs: {} ({})",
            "",
            d.needs.trait_name(),
            d.needs.explain()
        )?;
        writeln!(out, "  {:<14} options: {}", "", options(&d.defaults))?;
    }
    write_pair_kinds(reg, out)?;
    writeln!(out, "pairs that cannot run, and why:")?;
    for (_, _, why) in &incompatible {
        writeln!(out, "  {why}")?;
    }
    writeln!(out, "papers:")?;
    write_papers(out)
}

/// Each pair's constraint kinds, then why each plugin refuses the kinds it does not take.
fn write_pair_kinds(reg: &Registry, out: &mut dyn Write) -> Result<(), CliError> {
    writeln!(
        out,
        "constraint kinds (coulomb: the three-row contact every pair takes; the others: MuJoCo's):"
    )?;
    for p in reg.pairs() {
        let (Ok(f), Ok(d)) = (reg.formulation(p.formulation), reg.driver(p.optimizer)) else {
            continue;
        };
        let kinds = Registry::pair_kinds(f, d);
        let refused: Vec<&str> = Registry::pair_refusals(f, d).iter().map(|r| r.0).collect();
        let refused = match refused.is_empty() {
            true => String::new(),
            false => format!("; refuses {}", refused.join(", ")),
        };
        writeln!(out, "  {:<28} {}{refused}", p.label(), kinds.join(", "))?;
    }
    writeln!(out, "why kinds are refused:")?;
    let formulations = reg
        .formulations()
        .iter()
        .map(|f| (f.name, f.kinds, f.refuses));
    let drivers = reg.drivers().iter().map(|d| (d.name, d.kinds, d.refuses));
    for (name, kinds, why) in formulations.chain(drivers) {
        if kinds.len() < LABELS.len() {
            writeln!(out, "  {name:<14} takes {}: {why}", kinds.join(", "))?;
        }
    }
    Ok(())
}

fn write_papers(out: &mut dyn Write) -> Result<(), CliError> {
    for p in PAPERS {
        writeln!(out, "  {:<14} {}", p.id, p.title)?;
    }
    Ok(())
}

/// `contactlab reproduce`: runs every config under `experiments/configs/<paper>/` (in file-name
/// order) with `lab`, then writes the report. On a dirty tree it refuses before running
/// anything, unless `allow_dirty` ([`check_tree`]).
pub fn reproduce(
    lab: &Lab,
    paper: Option<&str>,
    list: bool,
    allow_dirty: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let Some(id) = paper.filter(|_| !list) else {
        return write_papers(out);
    };
    let p = contactlab_report::paper(id)?;
    check_tree(lab.root(), allow_dirty)?;
    let dir = lab.root().join("experiments/configs").join(p.id);
    let mut configs: Vec<PathBuf> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    configs.sort();
    for c in &configs {
        run_config(lab, c, None, &[], out)?;
    }
    report(p.id, lab.root(), allow_dirty, out)
}
