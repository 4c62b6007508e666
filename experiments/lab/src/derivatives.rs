//! The derivatives of a solve's answer to its problem's data, by field name, as the Python
//! package and notebooks ask for them (issue 43).
//!
//! The answers of the Coulomb cone (the natural map's pairs, PGS, ADMM) are differentiated
//! through the natural map ([`Sensitivity`], the implicit function theorem at the answer):
//! whichever driver found the answer, the derivative is the model's. A contact-space problem's
//! fields are `q`, `W` and `mu`; a generalized problem's `f`, `w`, `M`, `H` and `mu`
//! ([`GeneralizedSensitivity`], the chain rule through `W = H' M^-1 H`, `q = H' M^-1 f + w`).
//! The outputs are `r` and `u`, and `v` for a generalized problem. The friction pyramid's
//! answers are differentiated through the min-map in the same way ([`pyramid_sensitivity`]),
//! the FB MLCP's pyramid of `n_f` directions through its own equations ([`mlcp_sensitivity`]),
//! and maximum dissipation's (Hwangbo's bisection-SOR) through the
//! conditions its fixed point satisfies ([`dissipation_sensitivity`]). SAP's answers (the
//! regularized model) are differentiated through SAP's own optimality condition
//! ([`SapSensitivity`], `K dv = -d(grad l_p)` on its Hessian, `R`'s dependence on `M` and `H`
//! held; its compliance fields `stiffness`, `tau_d` and `dt` move `R` and the bias), on
//! generalized problems of Coulomb contacts, and on contact-space ones
//! through the generalized form SAP solves them in (`A = W^-1`, [`SapLocalSensitivity`]).

use contactlab_core::plugin::Formulation;
use contactlab_core::plugin::Model;
use contactlab_core::{CoreError, LocalSolve, StepProblem};
use contactlab_formulations::castro::params::RegularizationParams;
use contactlab_formulations::castro::projection::SapRegion;
pub use contactlab_formulations::castro::sensitivity::local::SapLocalSensitivity;
pub use contactlab_formulations::castro::sensitivity::SapSensitivity;
use contactlab_formulations::erleben::plugin::MinMapFormulation;
pub use contactlab_formulations::erleben::sensitivity::pyramid_sensitivity;
pub use contactlab_formulations::hwangbo::sensitivity::dissipation_sensitivity;
pub use contactlab_formulations::mylapilli::mlcp_sensitivity;
use contactlab_formulations::mylapilli::MlcpFbFormulation;
pub use contactlab_formulations::natural_map::sensitivity::generalized::{
    GeneralizedDerivative, GeneralizedDirection, GeneralizedSensitivity,
};
pub use contactlab_formulations::natural_map::sensitivity::names::{
    GENERALIZED_FIELDS, GENERALIZED_OUTPUTS, LOCAL_FIELDS, LOCAL_OUTPUTS,
};
use contactlab_formulations::natural_map::sensitivity::names::{R, U, V};
pub use contactlab_formulations::natural_map::sensitivity::{
    LocalDerivative, LocalDirection, Regime, Sensitivity,
};
use serde_json::Value;

/// The constraint kinds' own parameters (MuJoCo's names and the blocks'), which a direction may
/// not name yet: asked for, the refusal names the kind.
const KIND_PARAMETERS: [(&[&str], &str); 4] = [
    (&["f_max", "frictionloss"], "friction loss (its bound)"),
    (
        &["solref", "solimp"],
        "MuJoCo's soft rows (SAP's compliance is its fields `stiffness`, `tau_d` and `dt`)",
    ),
    (
        &["target", "targets"],
        "rigid rows (their drift targets are part of `w`)",
    ),
    (
        &["torsion", "rolling", "condim"],
        "contacts of condim 4 and 6 (a block's `mu` moves its sliding pair only)",
    ),
];

/// The derivatives of an answer as its problem's form has them: contact space or generalized,
/// whichever model they are of.
enum Form<'a> {
    Local(&'a dyn LocalDerivative),
    Generalized(&'a dyn GeneralizedDerivative),
}

/// One named array: a field's direction or gradient, or an output's tangent or cotangent
/// (matrices row-major).
pub type Named = (&'static str, Vec<f64>);

/// The factored derivatives of one answer.
#[derive(Debug)]
pub enum Derivatives {
    /// Of a contact-space problem (boxed, as the generalized one: both hold dense factors).
    Local(Box<Sensitivity>),
    /// Of a generalized problem (boxed: it holds the contact-space one and the chain rule's
    /// factors).
    Generalized(Box<GeneralizedSensitivity>),
    /// Of SAP's answer to a generalized problem.
    Sap(Box<SapSensitivity>),
    /// Of SAP's answer to a contact-space problem.
    SapLocal(Box<SapLocalSensitivity>),
}

impl Derivatives {
    /// Factors the derivatives of `solve`'s answer to `step`, which the ruler accepts to `tol`
    /// (SAP's: eq. 26 to `tol` at its unknowns; a solve that did not converge is refused: the
    /// derivative of a point that is not an answer means nothing). `options` are the
    /// formulation's (SAP's `beta` and `sigma` set its regularisation).
    pub fn new(
        step: &StepProblem,
        solve: &LocalSolve,
        options: &Value,
        tol: f64,
    ) -> Result<Derivatives, CoreError> {
        let r = &solve.r;
        let local = match solve.model {
            Model::CoulombCone => Sensitivity::new(step.local()?, r, tol)?,
            Model::FrictionPyramid => pyramid(step, options, solve, tol)?,
            Model::MaximumDissipation => dissipation_sensitivity(step.local()?, r, tol)?,
            Model::Regularized => return sap(step, options, &solve.x, tol),
            other => {
                return Err(CoreError::Unsupported(format!(
                    "sensitivities are built for answers of the Coulomb cone (natural map, PGS, \
                     ADMM), the friction pyramid's min-map, maximum dissipation (the \
                     bisection-SOR) and SAP's regularized model; this pair solves the {} model",
                    other.as_str()
                )))
            }
        };
        Ok(match step.generalized() {
            Some(g) => Derivatives::Generalized(Box::new(GeneralizedSensitivity::new(g, local)?)),
            None => Derivatives::Local(Box::new(local)),
        })
    }

    /// Whether the impulses are not unique at the answer (never for SAP, whose regularisation
    /// makes its cost strongly convex).
    pub fn non_unique(&self) -> bool {
        self.local_sensitivity().is_some_and(|s| s.non_unique())
    }

    /// Each block's regime at the answer, degenerate within `margin` of a kink: the natural
    /// map's ([`Sensitivity::regimes`]); SAP's regions (appendix C: no contact, stiction,
    /// sliding), `y` within `margin` of a region boundary ([`SapSensitivity::degenerate`]).
    pub fn regimes(&self, margin: f64) -> Vec<&'static str> {
        let sap = |s: &SapSensitivity| {
            s.regions()
                .iter()
                .zip(s.degenerate(margin))
                .map(|(r, near)| match (near, r) {
                    (true, _) => Regime::Degenerate.name(),
                    (_, SapRegion::NoContact) => Regime::Separating.name(),
                    (_, SapRegion::Stiction) => Regime::Sticking.name(),
                    (_, SapRegion::Sliding) => Regime::Sliding.name(),
                })
                .collect()
        };
        match self {
            Derivatives::Sap(s) => sap(s),
            Derivatives::SapLocal(s) => sap(s.generalized()),
            _ => self
                .local_sensitivity()
                .map(|s| s.regimes(margin).into_iter().map(Regime::name).collect())
                .unwrap_or_default(),
        }
    }

    /// The natural map's contact-space sensitivities, where the answer has them.
    fn local_sensitivity(&self) -> Option<&Sensitivity> {
        match self {
            Derivatives::Local(s) => Some(s),
            Derivatives::Generalized(g) => Some(g.local()),
            Derivatives::Sap(_) | Derivatives::SapLocal(_) => None,
        }
    }

    /// The answer's derivatives as the problem's form has them.
    fn form(&self) -> Form<'_> {
        match self {
            Derivatives::Local(s) => Form::Local(s.as_ref()),
            Derivatives::SapLocal(s) => Form::Local(s.as_ref()),
            Derivatives::Generalized(s) => Form::Generalized(s.as_ref()),
            Derivatives::Sap(s) => Form::Generalized(s.as_ref()),
        }
    }

    /// The fields a direction may name.
    pub fn fields(&self) -> &'static [&'static str] {
        match self.form() {
            Form::Local(_) => &LOCAL_FIELDS,
            Form::Generalized(_) => &GENERALIZED_FIELDS,
        }
    }

    /// The outputs a cotangent may name.
    pub fn outputs(&self) -> &'static [&'static str] {
        match self.form() {
            Form::Local(_) => &LOCAL_OUTPUTS,
            Form::Generalized(_) => &GENERALIZED_OUTPUTS,
        }
    }

    /// The rows, blocks and velocities (0 for a contact-space problem) of the answer.
    fn sizes(&self) -> (usize, usize, usize) {
        match self {
            Derivatives::Local(s) => (s.rows(), s.blocks(), 0),
            Derivatives::Generalized(g) => {
                let s = g.local();
                (s.rows(), s.blocks(), g.velocity().len())
            }
            Derivatives::Sap(s) => {
                let m = s.impulses().len();
                (m, m / 3, s.velocity().len())
            }
            Derivatives::SapLocal(s) => (s.rows(), s.rows() / 3, 0),
        }
    }

    /// A field's shape (`[n]` or `[rows, cols]`), or why the problem has no such field.
    pub fn shape(&self, field: &str) -> Result<Vec<usize>, CoreError> {
        let (m, blocks, nv) = self.sizes();
        let local = matches!(self.form(), Form::Local(_));
        let shape = match (local, field) {
            (_, "mu") => vec![blocks],
            (true, "q") => vec![m],
            (true, "W") => vec![m, m],
            (false, "f") => vec![nv],
            (false, "w") => vec![m],
            (false, "M") => vec![nv, nv],
            (false, "H") => vec![nv, m],
            (false, "phi0") => vec![m],
            (false, "stiffness" | "tau_d") => vec![blocks],
            (false, "dt") => vec![1],
            _ => return Err(self.no_field(field)),
        };
        Ok(shape)
    }

    /// An output's length, or why the answer has no such output.
    pub fn output_len(&self, output: &str) -> Result<usize, CoreError> {
        let (m, _, nv) = self.sizes();
        match (self, output) {
            (_, R | U) => Ok(m),
            (_, V) if matches!(self.form(), Form::Generalized(_)) => Ok(nv),
            _ => Err(CoreError::BadOption(format!(
                "sensitivity: no output `{output}` (the outputs: {})",
                self.outputs().join(", ")
            ))),
        }
    }

    fn no_field(&self, field: &str) -> CoreError {
        if let Some(kind) = KIND_PARAMETERS
            .iter()
            .find(|(names, _)| names.contains(&field))
            .map(|(_, kind)| kind)
        {
            return CoreError::Unsupported(format!(
                "sensitivity: `{field}` is a parameter of the {kind}, which the derivatives do \
                 not take yet (the fields: {})",
                self.fields().join(", ")
            ));
        }
        let kind = match self.form() {
            Form::Local(_) => "a contact-space",
            Form::Generalized(_) => "a generalized",
        };
        CoreError::BadOption(format!(
            "sensitivity: {kind} problem has no field `{field}` (its fields: {})",
            self.fields().join(", ")
        ))
    }

    /// Forward mode: the outputs' changes (`r`, `u`, and `v` for a generalized problem) along
    /// a change of the named fields (the others do not move).
    pub fn jvp(&self, direction: &[(&str, &[f64])]) -> Result<Vec<Named>, CoreError> {
        let get = |name: &str| -> Result<Option<&[f64]>, CoreError> {
            let mut found = None;
            for (k, v) in direction {
                self.shape(k)?;
                if *k == name {
                    found = Some(*v);
                }
            }
            Ok(found)
        };
        match self.form() {
            Form::Local(l) => {
                let d = LocalDirection {
                    q: get("q")?,
                    w: get("W")?,
                    mu: get("mu")?,
                };
                let (dr, du) = l.jvp(&d)?;
                Ok(vec![(R, dr), (U, du)])
            }
            Form::Generalized(g) => {
                let d = GeneralizedDirection {
                    f: get("f")?,
                    w: get("w")?,
                    m: get("M")?,
                    h: get("H")?,
                    mu: get("mu")?,
                    phi0: get("phi0")?,
                    stiffness: get("stiffness")?,
                    tau_d: get("tau_d")?,
                    dt: get("dt")?.map(single_dt).transpose()?,
                };
                let t = g.jvp(&d)?;
                Ok(vec![(R, t.r), (U, t.u), (V, t.v)])
            }
        }
    }

    /// Reverse mode: the gradient, for every field, of `sum <ō, o>` over the named outputs'
    /// cotangents (outputs left out count as zero).
    pub fn vjp(&self, cotangent: &[(&str, &[f64])]) -> Result<Vec<Named>, CoreError> {
        let mut bars: Vec<Vec<f64>> = Vec::new();
        for out in self.outputs() {
            bars.push(vec![0.0; self.output_len(out)?]);
        }
        for (k, v) in cotangent {
            let len = self.output_len(k)?;
            if v.len() != len {
                return Err(CoreError::BadOption(format!(
                    "sensitivity: the cotangent of `{k}` has {} entries, the answer {len}",
                    v.len()
                )));
            }
            let at = self.outputs().iter().position(|o| o == k).unwrap_or(0);
            bars[at].copy_from_slice(v);
        }
        match self.form() {
            Form::Local(l) => {
                let g = l.vjp(&bars[0], &bars[1])?;
                Ok(vec![("q", g.q), ("W", g.w), ("mu", g.mu)])
            }
            Form::Generalized(s) => {
                let g = s.vjp(&bars[0], &bars[1], &bars[2])?;
                Ok(vec![
                    ("f", g.f),
                    ("w", g.w),
                    ("M", g.m),
                    ("H", g.h),
                    ("mu", g.mu),
                    ("phi0", g.phi0),
                    ("stiffness", g.stiffness),
                    ("tau_d", g.tau_d),
                    ("dt", vec![g.dt]),
                ])
            }
        }
    }

    /// The dense Jacobian of output `of` with respect to field `wrt`, row-major with one row
    /// per entry of the output. A vector of data (`q`, `f`, `w`, `phi0`) no longer than the
    /// output takes one forward product per entry, which forms no gradient of the matrices;
    /// a longer one, a matrix (`W`, `M`, `H`; derivatives symmetrized where it is symmetric)
    /// and `mu` (whose frictionless blocks refuse a direction) one reverse product per entry
    /// of the output.
    pub fn jacobian(&self, wrt: &str, of: &str) -> Result<Vec<f64>, CoreError> {
        let shape = self.shape(wrt)?;
        let cols: usize = shape.iter().product();
        let rows = self.output_len(of)?;
        let pick = |named: Vec<Named>, key: &str| {
            named
                .into_iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v)
                .unwrap_or_default()
        };
        let mut out = vec![0.0; rows * cols];
        if shape.len() == 1 && wrt != "mu" && cols <= rows {
            let mut unit = vec![0.0; cols];
            for j in 0..cols {
                unit[j] = 1.0;
                let column = pick(self.jvp(&[(wrt, &unit)])?, of);
                column
                    .iter()
                    .enumerate()
                    .for_each(|(i, v)| out[i * cols + j] = *v);
                unit[j] = 0.0;
            }
            return Ok(out);
        }
        let mut unit = vec![0.0; rows];
        for i in 0..rows {
            unit[i] = 1.0;
            let row = pick(self.vjp(&[(of, &unit)])?, wrt);
            out[i * cols..(i + 1) * cols]
                .iter_mut()
                .zip(&row)
                .for_each(|(o, v)| *o = *v);
            unit[i] = 0.0;
        }
        Ok(out)
    }
}

/// The time step's change from its one-entry array.
fn single_dt(dt: &[f64]) -> Result<f64, CoreError> {
    match dt {
        [ddt] => Ok(*ddt),
        _ => Err(CoreError::BadOption(format!(
            "sensitivity: `ddt` has {} entries, the time step is one number",
            dt.len()
        ))),
    }
}

/// The friction pyramid's derivatives at the answer: through the min-map
/// ([`pyramid_sensitivity`]) for the min-map's pyramid, whose faces lie along the tangent axes,
/// and through the FB MLCP's own equations at its unknowns ([`mlcp_sensitivity`]) for Mylapilli
/// and Jain's pyramid of `n_f` directions at fixed angles. A turned min-map pyramid
/// (`theta0_deg`, `align_with_slip`) and MLCP directions turned with each contact's free slip
/// (`align_with_slip`, which moves them with `q`) are refused as models these do not state.
fn pyramid(
    step: &StepProblem,
    options: &Value,
    solve: &LocalSolve,
    tol: f64,
) -> Result<Sensitivity, CoreError> {
    // The min-map's own options, at their defaults (faces along the tangent axes); another
    // formulation's options (the FB MLCP's `n_f`) do not read as them.
    if let Ok(f) = serde_json::from_value::<MinMapFormulation>(options.clone()) {
        if f != MinMapFormulation::default() {
            return Err(CoreError::Unsupported(
                "sensitivities of the min-map's friction pyramid are built for its faces along \
                 the tangent axes (theta0_deg = 0, align_with_slip = false); this answer's \
                 polyhedron is another model"
                    .into(),
            ));
        }
        return pyramid_sensitivity(step.local()?, &solve.r, tol);
    }
    if let Ok(f) = serde_json::from_value::<MlcpFbFormulation>(options.clone()) {
        if f.align_with_slip {
            return Err(CoreError::Unsupported(
                "sensitivities of the FB MLCP are built for directions at fixed angles; \
                 align_with_slip turns them with each contact's free slip, another model"
                    .into(),
            ));
        }
        let mlcp = f.build(step)?;
        return mlcp_sensitivity(step.local()?, &mlcp, &solve.x, tol);
    }
    Err(CoreError::Unsupported(
        "sensitivities of the friction pyramid are built for the min-map's and the FB MLCP's; \
         this answer's polyhedron is another model"
            .into(),
    ))
}

/// SAP's derivatives at the unknowns `x` its solve ended at, with the regularisation of eqs.
/// 29-30 from the formulation's `beta` and `sigma`.
fn sap(step: &StepProblem, options: &Value, x: &[f64], tol: f64) -> Result<Derivatives, CoreError> {
    let number = |key: &str| {
        options.get(key).and_then(Value::as_f64).ok_or_else(|| {
            CoreError::BadOption(format!("sensitivity: SAP's option `{key}` is missing"))
        })
    };
    let params = RegularizationParams {
        beta: number("beta")?,
        sigma: number("sigma")?,
    };
    Ok(match step.generalized() {
        Some(g) => Derivatives::Sap(Box::new(SapSensitivity::at_unknowns(g, x, &params, tol)?)),
        None => Derivatives::SapLocal(Box::new(SapLocalSensitivity::at_unknowns(
            step.local()?,
            x,
            &params,
            tol,
        )?)),
    })
}

#[cfg(test)]
mod tests;
