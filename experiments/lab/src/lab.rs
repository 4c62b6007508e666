//! The lab: the one value that the command line, the notebooks, the physical-fidelity study and
//! the Python package hold to solve anything or run anything. It carries
//!
//! - the [`Registry`] of formulations and drivers (the standard one, or one a notebook or a test
//!   extended), passed down to every solve: a config's run, the matrix, the config check, dumps;
//! - the root that configs, problem files and run outputs resolve against (the workspace root:
//!   `experiments/configs/`, `data/`);
//! - the [`Settings`] every run shares (threads, progress bars, the sweeps' time limit).
//!
//! A run writes its rows and its `.meta.json` under `data/runs/` ([`Lab::run`]), the meta with
//! each run's scene parameters and constants, so that reports never rebuild a scene; the
//! reports read them back without the lab (`contactlab-report` does not depend on this crate).

use contactlab_runs::RunConfig;
use std::io::Write;
use std::path::{Path, PathBuf};

use contactlab_core::StepProblem;
use contactlab_runs::config::{ConfigError, ExperimentConfig};
use contactlab_runs::engines::EnginesConfig;
use contactlab_runs::ladder::LadderConfig;
use contactlab_runs::matrix::{config_kind, MatrixConfig};
use contactlab_runs::problems::ProblemsConfig;
use contactlab_runs::schema::{RunMeta, RunSample};
use contactlab_runs::single_contact::SingleContactConfig;
use contactlab_runs::store::{placed, write_meta, write_parquet};
use contactlab_runs::SolverSpec;

use crate::check;
use crate::context::{Context, Settings};
use crate::dump::{self, DumpedStep, Form};
use crate::engines::{run_engines, EnginesOutput};
use crate::ladder::{ladder_frame, run_ladder, LadderOutput};
use crate::matrix::{matrix_frame, run_matrix, shard_problems, worst_case_seconds, MatrixOutput};
use crate::plan::ExperimentPlan;
use crate::problems::{problems_frame, run_problems, ProblemsOutput};
use crate::registry::{LocalSolve, Pair, Registry, RegistryError, ResolvedSolver};
use crate::runner::{run_experiment, steps_frame, traces_frame, ExperimentOutput, RunError};
use crate::single_contact::{self, run_single_contact, single_contact_frame, SingleContactOutput};

/// What [`Lab::run`] wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    /// `<paper>/<name>`.
    pub name: String,
    /// Runs of a sweep, or problems of a matrix.
    pub runs: usize,
    /// Rows written.
    pub rows: usize,
    /// Wall-clock seconds.
    pub wall_seconds: f64,
    /// The rows' file.
    pub path: PathBuf,
}

/// The registry, the data root and the run settings: see the module documentation.
pub struct Lab {
    registry: Registry,
    root: PathBuf,
    settings: Settings,
}

impl Lab {
    /// The standard registry on the workspace this program was built from (or the current
    /// directory when it holds `experiments/configs`), default settings.
    pub fn standard() -> Lab {
        Lab::new(Registry::standard(), workspace_root())
    }

    /// A lab on `registry` whose configs and runs resolve against `root`.
    pub fn new(registry: Registry, root: impl Into<PathBuf>) -> Lab {
        Lab {
            registry,
            root: root.into(),
            settings: Settings::default(),
        }
    }

    /// The same lab with other settings.
    pub fn with_settings(mut self, settings: Settings) -> Lab {
        self.settings = settings;
        self
    }

    /// The same lab on another root.
    pub fn with_root(mut self, root: impl Into<PathBuf>) -> Lab {
        self.root = root.into();
        self
    }

    /// The registry every solve of this lab uses.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The root configs and outputs resolve against.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The run settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Resolves a spec into a solver ready for many problems.
    pub fn resolve(&self, spec: &SolverSpec) -> Result<ResolvedSolver, RegistryError> {
        self.registry.resolve(spec)
    }

    /// Solves one problem as `spec` says, from `warm` when `spec.start` is `warm`.
    pub fn solve(
        &self,
        problem: &StepProblem,
        spec: &SolverSpec,
        warm: Option<&[f64]>,
    ) -> Result<LocalSolve, RegistryError> {
        self.registry.solve(problem, spec, warm)
    }

    /// The registry, root and settings borrowed, as the runners take them.
    pub fn context(&self) -> Context<'_> {
        Context {
            registry: &self.registry,
            root: &self.root,
            settings: &self.settings,
        }
    }

    /// Reads an experiment config, expands its `[every_pair]` over this lab's compatible pairs
    /// and plans it ([`Lab::plan`]).
    pub fn experiment(&self, path: &Path) -> Result<ExperimentPlan, ConfigError> {
        ExperimentPlan::load(self.context(), path)
    }

    /// Checks what the config's schema cannot (every solver's names, pairing and options
    /// against the registry, the scene's kind, every run's scene parameters with the sweep
    /// values applied) and keeps what the checks found: the solvers resolved, the scenes'
    /// configs parsed ([`ExperimentPlan`]). The error names the file and the key at fault.
    pub fn plan(&self, cfg: ExperimentConfig, path: &Path) -> Result<ExperimentPlan, ConfigError> {
        ExperimentPlan::new(self.context(), cfg, path)
    }

    /// Checks an experiment config as [`Lab::plan`] does, keeping nothing.
    pub fn check_experiment(&self, cfg: &ExperimentConfig, path: &Path) -> Result<(), ConfigError> {
        self.plan(cfg.clone(), path).map(|_| ())
    }

    /// Reads a matrix config and checks it against this lab ([`Lab::check_matrix`]).
    pub fn matrix(&self, path: &Path) -> Result<MatrixConfig, ConfigError> {
        let cfg = MatrixConfig::load(path)?;
        self.check_matrix(&cfg, path)?;
        Ok(cfg)
    }

    /// Checks a matrix's `skip` against this lab's pairs.
    pub fn check_matrix(&self, cfg: &MatrixConfig, path: &Path) -> Result<(), ConfigError> {
        check::check_matrix(&self.registry, cfg, path)
    }

    /// The pairs a matrix runs: every compatible pair of the registry, in its order, less the
    /// matrix's `skip`.
    pub fn matrix_pairs(&self, cfg: &MatrixConfig) -> Vec<Pair> {
        check::matrix_pairs(&self.registry, cfg)
    }

    /// Reads a problem-set config and checks it against this lab ([`Lab::check_problems`]).
    pub fn problems(&self, path: &Path) -> Result<ProblemsConfig, ConfigError> {
        let cfg = ProblemsConfig::load(path)?;
        self.check_problems(&cfg, path)?;
        Ok(cfg)
    }

    /// Checks every solver of a problem-set config against the registry.
    pub fn check_problems(&self, cfg: &ProblemsConfig, path: &Path) -> Result<(), ConfigError> {
        check::check_problems(&self.registry, cfg, path)
    }

    /// Runs a problem-set config in memory, on the calling thread (it times solves). The
    /// config is checked first.
    pub fn run_problems(
        &self,
        cfg: &ProblemsConfig,
        path: &Path,
    ) -> Result<ProblemsOutput, RunError> {
        self.check_problems(cfg, path)?;
        run_problems(self.context(), cfg, path)
    }

    /// Reads a single-contact config and checks it against this lab
    /// ([`Lab::check_single_contact`]).
    pub fn single_contact(&self, path: &Path) -> Result<SingleContactConfig, ConfigError> {
        let cfg = SingleContactConfig::load(path)?;
        self.check_single_contact(&cfg, path)?;
        Ok(cfg)
    }

    /// Checks a single-contact config: its simulation as an experiment ([`Lab::plan`]: the
    /// driver, the scene, every run's parameters) and its method names.
    pub fn check_single_contact(
        &self,
        cfg: &SingleContactConfig,
        path: &Path,
    ) -> Result<(), ConfigError> {
        self.plan(cfg.simulation(), path)?;
        single_contact::methods(cfg, path).map(|_| ())
    }

    /// Runs a single-contact config in memory ([`crate::single_contact`]): the runs' samples
    /// on the settings' threads, the timing on one. Its simulation is planned first (the
    /// check), and its method names checked.
    pub fn run_single_contact(
        &self,
        cfg: &SingleContactConfig,
        path: &Path,
    ) -> Result<SingleContactOutput, RunError> {
        let plan = self.plan(cfg.simulation(), path)?;
        self.in_pool(|| run_single_contact(&plan, cfg, path))
    }

    /// Runs an other-engine config's harness ([`crate::engines`]).
    pub fn run_engines(&self, cfg: &EnginesConfig) -> Result<EnginesOutput, RunError> {
        run_engines(&self.root, cfg)
    }

    /// Runs `f` on a pool of the settings' threads (the current pool when unset).
    pub fn in_pool<T: Send>(
        &self,
        f: impl FnOnce() -> Result<T, RunError> + Send,
    ) -> Result<T, RunError> {
        self.in_pool_of(self.settings.threads, f)
    }

    /// Runs `f` on a pool of `threads` threads (the current pool when `None`).
    fn in_pool_of<T: Send>(
        &self,
        threads: Option<usize>,
        f: impl FnOnce() -> Result<T, RunError> + Send,
    ) -> Result<T, RunError> {
        match threads {
            None => f(),
            Some(n) => rayon::ThreadPoolBuilder::new()
                .num_threads(n.max(1))
                .build()
                .map_err(|e| RunError::Threads(e.to_string()))?
                .install(f),
        }
    }

    /// Runs an experiment config in memory (the shard's runs), without writing anything: what
    /// a notebook plots from. The config is planned first ([`Lab::plan`]), then run
    /// ([`Lab::run_plan`]).
    pub fn run_experiment(
        &self,
        cfg: &ExperimentConfig,
        path: &Path,
        shard: Option<(usize, usize)>,
    ) -> Result<ExperimentOutput, RunError> {
        let plan = self.plan(cfg.clone(), path)?;
        self.run_plan(&plan, shard)
    }

    /// Runs a plan in memory (the shard's runs), without writing anything. Its config's
    /// `threads`, when it sets them, override the settings'.
    pub fn run_plan(
        &self,
        plan: &ExperimentPlan,
        shard: Option<(usize, usize)>,
    ) -> Result<ExperimentOutput, RunError> {
        self.in_pool_of(plan.config().threads.or(self.settings.threads), || {
            run_experiment(plan, shard, self.settings.progress)
        })
    }

    /// Runs a matrix config in memory (the shard's problems), printing its worst-case time
    /// on `log` first. The config is checked first.
    pub fn run_matrix(
        &self,
        cfg: &MatrixConfig,
        path: &Path,
        shard: Option<(usize, usize)>,
        log: &mut dyn Write,
    ) -> Result<MatrixOutput, RunError> {
        self.check_matrix(cfg, path)?;
        let pairs = self.matrix_pairs(cfg);
        let problems = shard_problems(self.context(), cfg, path, shard)?;
        let threads = self.threads();
        writeln!(
            log,
            "matrix/{}: {} problems x {} pairs, {} s per solve: at most {:.0} min on {threads} threads",
            cfg.name,
            problems.len(),
            pairs.len(),
            cfg.time_limit,
            worst_case_seconds(problems.len(), pairs.len(), cfg.time_limit, threads) / 60.0
        )?;
        self.in_pool(|| run_matrix(self.context(), cfg, &pairs, &problems))
    }

    /// Reads a ladder config and checks it against this lab: its pairs, and each scene's
    /// config with the driver and run it names.
    pub fn ladder(&self, path: &Path) -> Result<LadderConfig, RunError> {
        let cfg = LadderConfig::load(path)?;
        check::check_pairs(&self.registry, &cfg.skip, &cfg.only, path)?;
        for scene in &cfg.scenes {
            let plan = self.experiment(&self.root.join(&scene.config))?;
            crate::ladder::scene_run(&plan, scene)?;
        }
        Ok(cfg)
    }

    /// Runs a ladder config in memory on the lab's pool, printing its size on `log` first.
    pub fn run_ladder(
        &self,
        cfg: &LadderConfig,
        log: &mut dyn Write,
    ) -> Result<LadderOutput, RunError> {
        let pairs = check::select_pairs(&self.registry, &cfg.skip, &cfg.only);
        let samples: Vec<String> = cfg
            .scenes
            .iter()
            .map(|s| format!("{} {}", s.name, cfg.samples_of(s)))
            .collect();
        writeln!(
            log,
            "{}/{}: {} scenes (samples: {}) x {} pairs x {} rungs, {} s per solve at most, on {} threads",
            cfg.paper,
            cfg.name,
            cfg.scenes.len(),
            samples.join(", "),
            pairs.len(),
            cfg.rungs().len(),
            cfg.time_limit,
            self.threads()
        )?;
        self.in_pool(|| run_ladder(self.context(), cfg, &pairs))
    }

    /// The problems of `steps` of run `run` of the experiment config at `config`, simulated
    /// from its start with the config's driver ([`dump::scene_problems`]).
    pub fn scene_problems(
        &self,
        config: &Path,
        run: usize,
        steps: &[usize],
    ) -> Result<Vec<DumpedStep>, RunError> {
        dump::scene_problems(&self.experiment(config)?, run, steps)
    }

    /// `contactlab dump`: writes those steps' problems to `out` as JSON problem files.
    pub fn dump(
        &self,
        config: &Path,
        run: usize,
        steps: &[usize],
        form: Form,
        out: &Path,
    ) -> Result<Vec<PathBuf>, RunError> {
        dump::dump(&self.experiment(config)?, run, steps, form, out)
    }

    /// `contactlab run`: runs the config at `path` (any kind: an experiment sweep, a matrix,
    /// a problem set, other engines, single-contact methods), the shard's part when sharded (sweeps and matrices), and
    /// writes its rows under `data/runs/` with a `.meta.json` beside them (timing, threads,
    /// load and provenance; for a sweep, each run's scene as a
    /// [`SceneRecord`](contactlab_runs::store::SceneRecord) under `"scenes"`).
    pub fn run(
        &self,
        path: &Path,
        shard: Option<(usize, usize)>,
        log: &mut dyn Write,
    ) -> Result<RunSummary, RunError> {
        self.run_sets(path, shard, &[], log)
    }

    /// [`Lab::run`] on the named sets of a matrix only (every set when `sets` is empty), its
    /// rows under `<name>-<sets>` ([`MatrixConfig::only_sets`]); other kinds of config have no
    /// sets to choose and refuse a name.
    pub fn run_sets(
        &self,
        path: &Path,
        shard: Option<(usize, usize)>,
        sets: &[String],
        log: &mut dyn Write,
    ) -> Result<RunSummary, RunError> {
        let kind = config_kind(path);
        if !sets.is_empty() && kind.as_deref() != Some("matrix") {
            return Err(RunError::Config(ConfigError::Invalid {
                path: path.into(),
                key: "kind".into(),
                message: "only a matrix has sets to choose (`--set`)".into(),
            }));
        }
        match kind.as_deref() {
            None => self.write_experiment(path, shard),
            Some("matrix") => self.write_matrix(path, shard, sets, log),
            Some(kind @ ("problems" | "engines" | "single_contact" | "ladder")) if shard.is_some() => {
                Err(RunError::Config(ConfigError::Invalid {
                    path: path.into(),
                    key: "kind".into(),
                    message: format!("a `{kind}` run is not sharded: it times solves on one machine"),
                }))
            }
            Some("problems") => self.write_problems(path),
            Some("engines") => self.write_engines(path),
            Some("single_contact") => self.write_single_contact(path),
            Some("ladder") => self.write_ladder(path, log),
            Some(other) => Err(RunError::Config(ConfigError::Invalid {
                path: path.into(),
                key: "kind".into(),
                message: format!(
                    "unknown config kind `{other}`; known: none (an experiment sweep), \"matrix\", \"problems\", \"engines\", \"single_contact\", \"ladder\""
                ),
            })),
        }
    }

    fn write_problems(&self, path: &Path) -> Result<RunSummary, RunError> {
        let cfg = self.problems(path)?;
        let result = self.run_problems(&cfg, path)?;
        let data = cfg.data_path(&self.root);
        let mut frame = problems_frame(&result.rows)?;
        write_parquet(&mut frame, &data)?;
        let solve_seconds: f64 = result
            .rows
            .iter()
            .map(|r| r.seconds * r.rounds as f64)
            .filter(|s| s.is_finite())
            .sum();
        write_meta(
            &data,
            &self.root,
            None,
            1,
            RunMeta {
                paper: Some(cfg.paper.clone()),
                experiment: Some(cfg.name.clone()),
                runs: Some(result.problems as u64),
                rows: Some(frame.height() as u64),
                rounds: Some(cfg.rounds as u64),
                left_out: Some(result.left_out.clone()),
                wall_seconds: Some(result.wall_seconds),
                solve_seconds: Some(solve_seconds),
                ..RunMeta::default()
            },
        )?;
        Ok(RunSummary {
            name: format!("{}/{}", cfg.paper, cfg.name),
            runs: result.problems,
            rows: frame.height(),
            wall_seconds: result.wall_seconds,
            path: data,
        })
    }

    fn write_single_contact(&self, path: &Path) -> Result<RunSummary, RunError> {
        let cfg = SingleContactConfig::load(path)?;
        let result = self.run_single_contact(&cfg, path)?;
        let data = cfg.data_path(&self.root);
        let mut frame = single_contact_frame(&result.rows)?;
        write_parquet(&mut frame, &data)?;
        let runs: Vec<RunSample> = result
            .runs
            .iter()
            .map(|r| RunSample {
                run: r.spec.index as u64,
                sweep: r
                    .spec
                    .keys
                    .iter()
                    .map(|(k, v)| (k.clone(), serde_json::to_value(v).unwrap_or_default()))
                    .collect(),
                steps: r.steps as u64,
                slipping: r.slipping as u64,
                samples: r.samples.len() as u64,
            })
            .collect();
        write_meta(
            &data,
            &self.root,
            None,
            self.threads(),
            RunMeta {
                paper: Some(cfg.paper.clone()),
                experiment: Some(cfg.name.clone()),
                runs: Some(result.runs.len() as u64),
                rows: Some(frame.height() as u64),
                rounds: Some(cfg.rounds as u64),
                samples: Some(result.rows.first().map_or(0, |r| r.samples) as u64),
                per_run: Some(runs),
                wall_seconds: Some(result.wall_seconds),
                solve_seconds: Some(result.rows.iter().map(|r| r.timed_seconds).sum::<f64>()),
                ..RunMeta::default()
            },
        )?;
        Ok(RunSummary {
            name: format!("{}/{}", cfg.paper, cfg.name),
            runs: result.runs.len(),
            rows: frame.height(),
            wall_seconds: result.wall_seconds,
            path: data,
        })
    }

    fn write_engines(&self, path: &Path) -> Result<RunSummary, RunError> {
        let cfg = EnginesConfig::load(path)?;
        let start = std::time::Instant::now();
        let result = self.run_engines(&cfg)?;
        let wall_seconds = start.elapsed().as_secs_f64();
        let data = cfg.data_path(&self.root);
        let mut frame = result.frame()?;
        write_parquet(&mut frame, &data)?;
        let skipped = match &result {
            EnginesOutput::Skipped(why) => Some(why.clone()),
            EnginesOutput::Measured(_) => None,
        };
        write_meta(
            &data,
            &self.root,
            None,
            1,
            RunMeta {
                paper: Some(cfg.paper.clone()),
                experiment: Some(cfg.name.clone()),
                runs: Some(1),
                rows: Some(frame.height() as u64),
                skipped,
                wall_seconds: Some(wall_seconds),
                ..RunMeta::default()
            },
        )?;
        Ok(RunSummary {
            name: format!("{}/{}", cfg.paper, cfg.name),
            runs: 1,
            rows: frame.height(),
            wall_seconds,
            path: data,
        })
    }

    fn threads(&self) -> usize {
        self.settings
            .threads
            .unwrap_or_else(rayon::current_num_threads)
    }

    fn write_experiment(
        &self,
        path: &Path,
        shard: Option<(usize, usize)>,
    ) -> Result<RunSummary, RunError> {
        let plan = self.experiment(path)?;
        let result = self.run_plan(&plan, shard)?;
        let cfg = plan.config();
        let data = cfg.data_path(&self.root);
        let out = placed(&data, shard);
        let mut steps = steps_frame(cfg, &result)?;
        write_parquet(&mut steps, &out)?;
        let mut traces = traces_frame(&result)?;
        let traces_path = data.with_file_name(format!("{}_traces.parquet", cfg.name));
        write_parquet(&mut traces, &placed(&traces_path, shard))?;
        let solve_seconds: f64 = result
            .runs
            .iter()
            .flat_map(|r| r.rows.iter())
            .map(|r| r.seconds)
            .sum();
        write_meta(
            &data,
            &self.root,
            shard,
            cfg.threads.unwrap_or_else(|| self.threads()),
            RunMeta {
                paper: Some(cfg.paper.clone()),
                experiment: Some(cfg.name.clone()),
                runs: Some(result.runs.len() as u64),
                rows: Some(steps.height() as u64),
                wall_seconds: Some(result.wall_seconds),
                solve_seconds: Some(solve_seconds),
                scenes: result.runs.iter().map(|r| r.scene.clone()).collect(),
                ..RunMeta::default()
            },
        )?;
        Ok(RunSummary {
            name: format!("{}/{}", cfg.paper, cfg.name),
            runs: result.runs.len(),
            rows: steps.height(),
            wall_seconds: result.wall_seconds,
            path: out,
        })
    }

    fn write_matrix(
        &self,
        path: &Path,
        shard: Option<(usize, usize)>,
        sets: &[String],
        log: &mut dyn Write,
    ) -> Result<RunSummary, RunError> {
        let cfg = self.matrix(path)?.only_sets(sets, path)?;
        let result = self.run_matrix(&cfg, path, shard, log)?;
        let data = cfg.data_path(&self.root);
        let out = placed(&data, shard);
        let mut frame = matrix_frame(&result.rows)?;
        write_parquet(&mut frame, &out)?;
        let solve_seconds: f64 = result
            .rows
            .iter()
            .map(|r| r.seconds)
            .filter(|s| s.is_finite())
            .sum();
        write_meta(
            &data,
            &self.root,
            shard,
            self.threads(),
            RunMeta {
                paper: Some(MatrixConfig::KIND.into()),
                experiment: Some(cfg.name.clone()),
                runs: Some(result.problems as u64),
                pairs: Some(result.pairs as u64),
                rows: Some(frame.height() as u64),
                wall_seconds: Some(result.wall_seconds),
                solve_seconds: Some(solve_seconds),
                ..RunMeta::default()
            },
        )?;
        Ok(RunSummary {
            name: format!("matrix/{}", cfg.name),
            runs: result.problems,
            rows: frame.height(),
            wall_seconds: result.wall_seconds,
            path: out,
        })
    }

    fn write_ladder(&self, path: &Path, log: &mut dyn Write) -> Result<RunSummary, RunError> {
        let cfg = self.ladder(path)?;
        let result = self.run_ladder(&cfg, log)?;
        let data = cfg.data_path(&self.root);
        let mut frame = ladder_frame(&result.rows)?;
        write_parquet(&mut frame, &data)?;
        let solve_seconds: f64 = result
            .rows
            .iter()
            .map(|r| r.seconds)
            .filter(|s| s.is_finite())
            .sum();
        write_meta(
            &data,
            &self.root,
            None,
            self.threads(),
            RunMeta {
                paper: Some(cfg.paper.clone()),
                experiment: Some(cfg.name.clone()),
                runs: Some(result.steps as u64),
                pairs: Some(result.pairs as u64),
                rows: Some(frame.height() as u64),
                wall_seconds: Some(result.wall_seconds),
                solve_seconds: Some(solve_seconds),
                ..RunMeta::default()
            },
        )?;
        Ok(RunSummary {
            name: format!("{}/{}", cfg.paper, cfg.name),
            runs: result.steps,
            rows: frame.height(),
            wall_seconds: result.wall_seconds,
            path: data,
        })
    }
}

/// The workspace root: the current directory when it holds `experiments/configs`, else the
/// checkout this program was built from.
pub fn workspace_root() -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_default();
    if cwd.join("experiments/configs").is_dir() {
        return cwd;
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(2)
        .unwrap_or(manifest)
        .to_path_buf()
}
